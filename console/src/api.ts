// The console's only way out: the public API on this origin, with the key in the
// X-Platform-Api-Key header (docs/api.md) and, for a partner acting on a child, its org in
// X-Platform-Acting-On. Every problem the API answers becomes an ApiError the page shows.

export const API_BASE = "/api/v1alpha1";

/** An RFC 9457 problem the API answered (or one the console made up for a network failure). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly title: string,
    readonly detail: string,
    readonly requestId: string | undefined,
    readonly body: Record<string, unknown> = {},
  ) {
    super(`${title}: ${detail}`);
  }
  /** The problem's short name: the last segment of its type URL. */
  get problemName(): string {
    return this.type.split("/").pop() ?? this.type;
  }
}

/** The last RateLimit headers seen, by tier ("read", "write", …). */
export interface RateLimitState {
  tier: string;
  remaining: number;
  limit: number | undefined;
  windowSeconds: number | undefined;
  resetSeconds: number | undefined;
  at: number;
}

type Listener = (state: Record<string, RateLimitState>) => void;
const rateLimits: Record<string, RateLimitState> = {};
const listeners = new Set<Listener>();

export function onRateLimit(listener: Listener): () => void {
  listeners.add(listener);
  listener({ ...rateLimits });
  return () => listeners.delete(listener);
}

/** `"read";r=299;t=60` and `"read";q=300;w=60` (the IETF draft's structured fields). */
function params(value: string): { tier: string; values: Record<string, number> } | undefined {
  const [first, ...rest] = value.split(";");
  const tier = first?.trim().replace(/^"|"$/g, "");
  if (!tier) return undefined;
  const values: Record<string, number> = {};
  for (const part of rest) {
    const [k, v] = part.split("=");
    if (k && v !== undefined && Number.isFinite(Number(v))) values[k.trim()] = Number(v);
  }
  return { tier, values };
}

function recordRateLimit(headers: Headers): void {
  const state = headers.get("RateLimit");
  if (!state) return;
  const now = params(state);
  if (!now || now.values.r === undefined) return;
  const policy = params(headers.get("RateLimit-Policy") ?? "");
  rateLimits[now.tier] = {
    tier: now.tier,
    remaining: now.values.r,
    limit: policy?.tier === now.tier ? policy.values.q : undefined,
    windowSeconds: policy?.tier === now.tier ? policy.values.w : undefined,
    resetSeconds: now.values.t,
    at: Date.now(),
  };
  for (const l of listeners) l({ ...rateLimits });
}

export interface Credentials {
  key: string;
  actingOn?: string | undefined;
}

export interface CallOptions {
  method?: "GET" | "POST" | "PATCH" | "DELETE";
  body?: unknown;
  query?: Record<string, string | string[] | number | boolean | undefined>;
  /** Writes that need one get a fresh Idempotency-Key per user action. */
  idempotent?: boolean;
  /** Sent without X-Platform-Acting-On even while acting on a child (the partner's own calls). */
  asSelf?: boolean;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export function apiUrl(path: string, query?: CallOptions["query"]): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === "") continue;
    if (Array.isArray(value)) for (const v of value) search.append(name, v);
    else search.append(name, String(value));
  }
  const qs = search.toString();
  return `${API_BASE}${path}${qs ? `?${qs}` : ""}`;
}

export function authHeaders(creds: Credentials, asSelf = false): Record<string, string> {
  return {
    "X-Platform-Api-Key": creds.key,
    ...(creds.actingOn && !asSelf ? { "X-Platform-Acting-On": creds.actingOn } : {}),
  };
}

/** A non-2xx answer as an ApiError: the problem when it is one, else what the status says. */
export async function toApiError(res: Response): Promise<ApiError> {
  const requestId = res.headers.get("X-Request-Id") ?? undefined;
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // Not JSON: the status alone speaks.
  }
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  return new ApiError(
    res.status,
    str(body.type) ?? "about:blank",
    str(body.title) ?? res.statusText ?? `HTTP ${res.status}`,
    str(body.detail) ?? `The API answered ${res.status}.`,
    str(body.requestId) ?? requestId,
    body,
  );
}

export function networkError(err: unknown): ApiError {
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError(0, "network", "The API could not be reached", message, undefined);
}

/**
 * Not from the browser's HTTP cache: one URL answers differently per key and per acting-on
 * header, and GET /organizations/me's ETag is the org's version, which two orgs can share (a
 * revalidation would be 304 with the other org's cached body). Typed loosely: Node's RequestInit
 * (the unit tests) has no `cache`.
 */
export const NO_STORE = { cache: "no-store" } as { cache?: "no-store" };

/** One API call; resolves with the parsed JSON (undefined for 204), rejects with an ApiError. */
export async function call<T>(creds: Credentials, path: string, opts: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", ...authHeaders(creds, opts.asSelf) };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  if (opts.idempotent) headers["Idempotency-Key"] = crypto.randomUUID();
  Object.assign(headers, opts.headers);
  let res: Response;
  try {
    res = await fetch(apiUrl(path, opts.query), {
      method: opts.method ?? "GET",
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      // Never a cookie, never a Referer: the key is the only credential.
      credentials: "omit",
      referrerPolicy: "no-referrer",
      ...NO_STORE,
      signal: opts.signal,
    });
  } catch (err) {
    throw networkError(err);
  }
  recordRateLimit(res.headers);
  if (!res.ok) throw await toApiError(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A page of a list endpoint. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
