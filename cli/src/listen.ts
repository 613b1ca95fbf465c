import { randomBytes } from "node:crypto";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { Webhook } from "standardwebhooks";
import { ApiError, apiBase, failure } from "./api-client.js";

// `platform listen`: the org's live event stream (GET /events/stream, with an API key) forwarded
// to a local URL as Standard Webhooks–signed POSTs, so a receiver's verification code runs
// against real events during development without a public HTTPS endpoint.

export interface ListenOptions {
  apiUrl: string;
  apiKey: string;
  /** Where each event is POSTed. */
  forwardTo: string;
  /** Only these kinds; every kind when empty. */
  events: string[];
  json: boolean;
  /** Resume after this event (the last id a previous session printed). */
  lastEventId?: string;
  /**
   * Where lastEventId came from: "saved" (the previous run's position, which may have left the
   * log: then the stream starts from now instead of failing) or "given" (--last-event-id).
   */
  lastEventIdSource?: "saved" | "given";
  /** Sign with this whsec_ secret instead of a new one per session. */
  secret?: string;
  /** Where the secret came from, for the header line (e.g. "stable for this API key, kept in …"). */
  secretNote?: string;
  /** Connection attempts before giving up when none has ever succeeded (default 5); after a first success it reconnects forever. */
  connectAttempts?: number;
  /** Reconnect backoff, doubling from min to max (tests shorten it). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Silence (not even a heartbeat) after which the connection counts as dead. */
  idleTimeoutMs?: number;
  /** How long the receiver has to answer. */
  forwardTimeoutMs?: number;
}

export interface ListenIo {
  /** One line of output (an event, or the session's header). */
  out(line: string): void;
  /** Progress and connection state, never machine output. */
  err(line: string): void;
  now(): Date;
  /** Called after each event is forwarded (to remember the position across runs). */
  forwarded?(eventId: string): void;
}

/** What happened to one forwarded event. */
export interface Forwarded {
  time: string;
  id: string;
  type: string;
  /** The receiver's HTTP status; null when it did not answer. */
  status: number | null;
  ms: number;
  error?: string;
}

const USER_AGENT = "Platform-CLI-Listen/1";

/** A new Standard Webhooks secret: whsec_ and 32 random bytes in base64, like subscriptions'. */
export function newSessionSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export function checkForwardTo(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError(`--forward-to must be a URL such as http://localhost:3000/webhooks, not '${raw}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ApiError(`--forward-to must be an http:// or https:// URL, not '${raw}'`);
  }
  return url.toString();
}

/** POSTs one event as its v2 delivery would arrive: same body, Standard Webhooks headers. */
export async function forward(
  signer: Webhook,
  target: string,
  message: { id: string; body: string },
  timeoutMs: number,
): Promise<{ status: number | null; ms: number; error?: string }> {
  const started = performance.now();
  // The wall clock of sending, whatever clock prints the lines: receivers check it against theirs.
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const res = await fetch(target, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": message.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signer.sign(message.id, new Date(timestamp * 1000), message.body),
      },
      body: message.body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, ms: Math.round(performance.now() - started) };
  } catch (err) {
    const error = (err as Error).name === "TimeoutError" ? `no response within ${timeoutMs} ms` : networkError(err);
    return { status: null, ms: Math.round(performance.now() - started), error };
  }
}

/** The most telling part of a failed fetch: the socket error's code (ECONNREFUSED), else its message. */
export function networkError(err: unknown): string {
  type Cause = { code?: string; message?: string; errors?: Cause[]; cause?: Cause };
  let cause = (err as Cause).cause;
  while (cause?.cause && !cause.code) cause = cause.cause;
  return cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (err as Error).message;
}

function eventLine(f: Forwarded): string {
  const outcome = f.status === null ? `error: ${f.error}` : String(f.status);
  return `${f.time}  ${f.type.padEnd(38)} ${f.id}  → ${outcome} (${f.ms} ms)`;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/** Not worth retrying: the key, the scope, a filter or the Last-Event-ID is wrong. */
function fatal(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    err.status !== undefined &&
    err.status >= 400 &&
    err.status < 500 &&
    err.status !== 408 &&
    err.status !== 429
  );
}

/**
 * Forwards the stream until `signal` aborts: reconnects with backoff after any failure and
 * resumes after the last event it forwarded (Last-Event-ID), so none is missed or repeated.
 * Throws ApiError for what retrying cannot fix (401, 403, 400).
 */
export async function listen(opts: ListenOptions, io: ListenIo, signal: AbortSignal): Promise<void> {
  const base = apiBase(opts.apiUrl);
  const target = checkForwardTo(opts.forwardTo);
  const secret = opts.secret ?? newSessionSecret();
  if (!secret.startsWith("whsec_")) throw new ApiError("--secret must be a whsec_… secret");
  const signer = new Webhook(secret);
  const minBackoff = opts.minBackoffMs ?? 1000;
  const maxBackoff = opts.maxBackoffMs ?? 30_000;
  const idleTimeout = opts.idleTimeoutMs ?? 45_000;
  const forwardTimeout = opts.forwardTimeoutMs ?? 15_000;
  const connectAttempts = opts.connectAttempts ?? 5;
  const query = opts.events.map((t) => `type=${encodeURIComponent(t)}`).join("&");
  const url = `${base}/events/stream${query ? `?${query}` : ""}`;
  let lastEventId = opts.lastEventId;

  if (opts.json) {
    io.out(JSON.stringify({ secret, forwardTo: target, events: opts.events, apiUrl: base }));
  } else {
    io.out(`Forwarding ${opts.events.length > 0 ? opts.events.join(", ") : "every event kind"} to ${target}`);
    io.out(`Signing secret: ${secret}${opts.secretNote ? ` (${opts.secretNote})` : ""}`);
    io.out("(verify deliveries with it as with a subscription's secret; press Ctrl-C to stop)");
  }

  let backoff = minBackoff;
  let connected = false;
  let failedAttempts = 0;
  let savedPosition = opts.lastEventIdSource === "saved";
  while (!signal.aborted) {
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal.addEventListener("abort", stop, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error(`no data for ${idleTimeout} ms`)), idleTimeout);
    };
    try {
      const res = await fetch(url, {
        headers: {
          "x-platform-api-key": opts.apiKey,
          accept: "text/event-stream",
          ...(lastEventId ? { "last-event-id": lastEventId } : {}),
        },
        signal: connection.signal,
      });
      if (res.status === 429) {
        const wait = Number(res.headers.get("retry-after") ?? "") * 1000 || maxBackoff;
        io.err(`${(await failure(res, "stream refused")).message}; retrying in ${Math.ceil(wait / 1000)} s`);
        await sleep(wait, signal);
        continue;
      }
      if (res.status === 400 && savedPosition && lastEventId) {
        // The previous run's position left the log (retention, another database): start from now.
        const refused = await failure(res, "GET /events/stream");
        if (refused.problem === "invalid-cursor") {
          io.err(`the saved position ${lastEventId} is not in the event log any more; starting from now`);
          lastEventId = undefined;
          savedPosition = false;
          continue;
        }
        throw refused;
      }
      if (!res.ok || !res.body) throw await failure(res, "GET /events/stream");
      io.err(`connected to ${base}${lastEventId ? ` (resuming after ${lastEventId})` : ""}`);
      connected = true;
      savedPosition = false;
      backoff = minBackoff;
      touch();
      const pending: EventSourceMessage[] = [];
      const parser = createParser({ onEvent: (e) => pending.push(e) });
      const decoder = new TextDecoder();
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        touch();
        parser.feed(decoder.decode(chunk, { stream: true }));
        while (pending.length > 0) {
          const message = pending.shift() as EventSourceMessage;
          if (!message.id) continue;
          let type = "?";
          try {
            type = String((JSON.parse(message.data) as { type?: string }).type ?? "?");
          } catch {
            // forwarded as it came; the receiver judges it
          }
          const at = io.now();
          const result = await forward(signer, target, { id: message.id, body: message.data }, forwardTimeout);
          lastEventId = message.id;
          io.forwarded?.(message.id);
          const line: Forwarded = { time: at.toISOString(), id: message.id, type, ...result };
          io.out(opts.json ? JSON.stringify(line) : eventLine(line));
          touch();
        }
      }
      if (!signal.aborted) {
        io.err("the stream ended; reconnecting");
        await sleep(minBackoff, signal);
      }
    } catch (err) {
      if (signal.aborted) break;
      if (fatal(err)) throw err;
      const why = err instanceof ApiError ? err.message : networkError(err);
      // Never connected: a wrong address or a stopped platform, which waiting will not fix.
      if (!connected && ++failedAttempts >= connectAttempts) {
        throw new ApiError(
          `cannot reach the API at ${base} after ${failedAttempts} attempts (${why}); is the platform running? ` +
            "`npm start` runs it; on other ports, export PLATFORM_URL as its banner says, or pass --api-url",
        );
      }
      io.err(`disconnected (${why}); reconnecting in ${Math.ceil(backoff / 1000)} s`);
      await sleep(backoff, signal);
      backoff = Math.min(maxBackoff, backoff * 2);
    } finally {
      clearTimeout(idle);
      signal.removeEventListener("abort", stop);
      connection.abort();
    }
  }
}
