// The live tail of GET /events/stream. EventSource cannot send the X-Platform-Api-Key header,
// so this reads the stream with fetch and parses Server-Sent Events itself; after a dropped
// connection it reconnects with Last-Event-ID, and the API continues after that event, without
// gaps or repeats.

import { ApiError, apiUrl, authHeaders, type Credentials, NO_STORE, networkError, toApiError } from "./api.js";

export interface SseMessage {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** Splits a text/event-stream into messages; feed it chunks as they arrive. */
export class SseParser {
  #buffer = "";
  #data: string[] = [];
  #id: string | undefined;
  #event: string | undefined;
  /** The `retry:` the server asked for, in ms. */
  retryMs: number | undefined;

  push(chunk: string): SseMessage[] {
    this.#buffer += chunk;
    const out: SseMessage[] = [];
    let newline = this.#buffer.search(/\r\n|\r|\n/);
    while (newline >= 0) {
      const line = this.#buffer.slice(0, newline);
      const width = this.#buffer.startsWith("\r\n", newline) ? 2 : 1;
      this.#buffer = this.#buffer.slice(newline + width);
      const message = this.#line(line);
      if (message) out.push(message);
      newline = this.#buffer.search(/\r\n|\r|\n/);
    }
    return out;
  }

  #line(line: string): SseMessage | undefined {
    if (line === "") {
      if (this.#data.length === 0) return undefined;
      const message = { id: this.#id, event: this.#event, data: this.#data.join("\n") };
      this.#data = [];
      this.#event = undefined;
      return message;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "id") this.#id = value;
    else if (field === "event") this.#event = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }
}

export type TailStatus = "connecting" | "live" | "reconnecting" | "stopped";

export interface TailHandlers {
  onMessage(message: SseMessage): void;
  onStatus(status: TailStatus, error?: ApiError): void;
}

const DEFAULT_RETRY_MS = 2_000;
/** Answers worth retrying: over the rate limit, the platform busy or restarting. */
const RETRYABLE = new Set([0, 408, 429, 500, 502, 503, 504]);

/**
 * Follows the stream until `signal` aborts, reconnecting with the last id it saw. A problem
 * that retrying cannot fix (a 4xx other than 408/429) stops it and is reported.
 */
export async function tail(
  creds: Credentials,
  query: { type?: string[] },
  handlers: TailHandlers,
  signal: AbortSignal,
): Promise<void> {
  let lastEventId: string | undefined;
  const parser = new SseParser();
  let attempt = 0;
  while (!signal.aborted) {
    handlers.onStatus(attempt === 0 ? "connecting" : "reconnecting");
    let failure: ApiError | undefined;
    try {
      const res = await fetch(apiUrl("/events/stream", query), {
        headers: {
          Accept: "text/event-stream",
          ...authHeaders(creds),
          ...(lastEventId ? { "Last-Event-ID": lastEventId } : {}),
        },
        credentials: "omit",
        referrerPolicy: "no-referrer",
        ...NO_STORE,
        signal,
      });
      if (!res.ok || !res.body) {
        failure = await toApiError(res);
        if (!RETRYABLE.has(failure.status)) {
          handlers.onStatus("stopped", failure);
          return;
        }
      } else {
        handlers.onStatus("live");
        attempt = 0;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          for (const message of parser.push(value)) {
            if (message.id) lastEventId = message.id;
            handlers.onMessage(message);
          }
        }
      }
    } catch (err) {
      if (signal.aborted) break;
      failure = err instanceof ApiError ? err : networkError(err);
    }
    if (signal.aborted) break;
    attempt += 1;
    handlers.onStatus("reconnecting", failure);
    const wait = Math.min(30_000, (parser.retryMs ?? DEFAULT_RETRY_MS) * Math.min(attempt, 5));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  handlers.onStatus("stopped");
}
