import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, type Credentials, call, type Page } from "./api.js";

/** Every error the API answers, with its title, detail and requestId (and status and type). */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : new ApiError(0, "console", "Error", String(error), undefined);
  return (
    <div class="error" role="alert">
      <p class="error-title">
        <strong>{e.title}</strong>
        {e.status ? <span class="muted"> ({e.status})</span> : null}
      </p>
      <p class="error-detail">{e.detail}</p>
      <dl class="error-meta">
        <dt>Request ID</dt>
        <dd>
          <code data-testid="error-request-id">{e.requestId ?? "none (the request did not reach the API)"}</code>
        </dd>
        {e.type !== "about:blank" && e.type !== "network" && e.type !== "console" ? (
          <>
            <dt>Type</dt>
            <dd>
              <code>{e.type}</code>
            </dd>
          </>
        ) : null}
      </dl>
    </div>
  );
}

/** Formatted JSON, scrollable and reachable by keyboard. */
export function Json({ value, label }: { value: unknown; label: string }) {
  let text: string;
  try {
    text = JSON.stringify(typeof value === "string" ? JSON.parse(value) : value, null, 2);
  } catch {
    text = String(value);
  }
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <pre class="json" tabIndex={0} title={label}>
      {text}
    </pre>
  );
}

/** A table that scrolls sideways on a narrow screen, reachable by keyboard. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section class="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

export function When({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return <span>{iso}</span>;
  return (
    <time dateTime={iso}>
      {d
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, "Z")}
    </time>
  );
}

/** Loads on mount and when `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/**
 * A cursor-paged list (`GET /events`, `GET /request-logs`): `load(false)` fetches the first page
 * of what `query()` asks now, `load(true)` appends the next one. The first page loads once, and
 * again when the key or the acting-on org changes.
 */
export function usePages<T>(creds: Credentials, path: string, query: () => Record<string, unknown>) {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);

  async function load(more: boolean) {
    setLoading(true);
    setError(undefined);
    try {
      const page = await call<Page<T>>(creds, path, {
        query: { ...query(), limit: 25, cursor: more ? (cursor ?? undefined) : undefined },
      });
      setItems((list) => (more ? [...list, ...(page.items ?? [])] : (page.items ?? [])));
      setCursor(str(page.nextCursor) ?? null);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  }

  useEffect(() => {
    load(false);
  }, [creds.key, creds.actingOn]);

  return { items, cursor, error, loading, load };
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** `2026-12-06T10:00` from a datetime-local input, as an ISO instant in the browser's zone. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);
