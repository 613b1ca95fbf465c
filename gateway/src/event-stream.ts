import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import type { PollEventsResponse } from "@platform/contracts/webhooks";
import type { Logger } from "@platform/kit/logger";
import { problem } from "@platform/kit/problems";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { StreamSlots } from "./stream-slots.js";

/** Tunables of GET /events/stream. */
export interface EventStreamOptions {
  /** Pause between polls of the log once a stream has caught up. */
  pollMs: number;
  /** Interval of the heartbeat comments (and of renewing the stream's slot and re-checking its key). */
  heartbeatMs: number;
  /** Streams one token may hold open at once, across gateway instances when slots live in Redis. */
  maxStreamsPerToken: number;
  /** Events per poll. */
  batch: number;
}

export const EVENT_STREAM_DEFAULTS: EventStreamOptions = {
  pollMs: 1000,
  heartbeatMs: 15_000,
  maxStreamsPerToken: 5,
  batch: 100,
};

/** What the client is told to wait before reconnecting (the SSE `retry` field). */
const RECONNECT_MS = 2000;
/** How long a poll failure (the webhooks service restarting) pauses the stream before it polls again. */
const POLL_RETRY_MS = 2000;

/** One SSE message: the id is the event's, the data its v2 envelope (one `data:` line per line of text). */
export function sseMessage(id: string, data: string): string {
  return `id: ${id}\n${data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join("")}\n`;
}

export interface StreamSource {
  /** The next events after `position`; throws what the service answers. */
  poll(position: bigint): Promise<PollEventsResponse>;
  /** Throws when the caller may no longer read (key revoked, grant withdrawn, scope removed). */
  recheck(): Promise<void>;
}

/** A stream's place under its token's cap. */
export interface StreamSlot {
  tokenId: string;
  id: string;
  release(): Promise<void>;
}

interface OpenStream {
  tokenId: string;
  /** Ends the response; `hard` also closes its connection at once; `comment` is its last line. */
  end(hard?: boolean, comment?: string): void;
  /** Checks now that the caller may still read (runs the route's access checks again). */
  recheck(): void;
}

/** The last line of a stream whose key was revoked: no event after it, then the stream ends. */
export const REVOKED_COMMENT = ": access revoked; the stream ends\n\n";

/**
 * The live streams of one gateway: each holds a slot of its token (at most
 * `maxStreamsPerToken`), polls the webhooks service's log after its position and writes each
 * event as it arrives, with heartbeat comments between. `closeAll` ends them when the gateway
 * shuts down, since open streams would otherwise hold the server open.
 */
export class EventStreams {
  readonly options: EventStreamOptions;
  readonly #slots: StreamSlots;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #open = new Set<OpenStream>();
  /** Connections that carried a stream, until they close: shutdown closes every one of them. */
  readonly #sockets = new Set<Socket>();

  constructor(deps: { slots: StreamSlots; logger: Logger; now: () => number; options: EventStreamOptions }) {
    this.#slots = deps.slots;
    this.#logger = deps.logger;
    this.#now = deps.now;
    this.options = deps.options;
  }

  get leaseMs(): number {
    return this.options.heartbeatMs * 4;
  }

  /** Takes a slot of the token for a new stream; 429 rate-limit-exceeded when it holds all of them. */
  async acquire(tokenId: string, reply: FastifyReply): Promise<StreamSlot> {
    const streamId = randomUUID();
    const cap = this.options.maxStreamsPerToken;
    let granted: boolean;
    try {
      granted = await this.#slots.acquire(tokenId, streamId, cap, this.#now(), this.leaseMs);
    } catch (err) {
      // Like the rate limiter: a store outage must not take the API down.
      this.#logger.error({ err }, "stream slots unavailable; stream not counted");
      return { tokenId, id: streamId, release: async () => {} };
    }
    if (!granted) {
      reply.header("retry-after", String(Math.ceil(this.options.heartbeatMs / 1000)));
      throw problem(
        "rate-limit-exceeded",
        `A token may hold at most ${cap} event streams open at once; close one (or wait for it to end) first.`,
        { limit: cap },
      );
    }
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await this.#slots.release(tokenId, streamId).catch((err: unknown) => {
        this.#logger.warn({ err }, "stream slot not released; it expires with its lease");
      });
    };
    return { tokenId, id: streamId, release };
  }

  /**
   * Takes over the response: writes the SSE headers and `first`'s events, then polls after the
   * position for as long as the client stays. Resolves when the stream has ended.
   */
  async serve(
    request: FastifyRequest,
    reply: FastifyReply,
    opened: { slot: StreamSlot; first: PollEventsResponse; source: StreamSource },
  ): Promise<void> {
    const { options } = this;
    const res = reply.raw;
    reply.hijack();
    // The gateway's onSend hooks do not run for a hijacked reply: their headers are set here.
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
    const actingOn = request.apiCall?.actingOn;
    res.writeHead(200, {
      ...headers,
      "x-request-id": request.id,
      ...(actingOn ? { "platform-acting-on": actingOn } : {}),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      // Proxies that buffer (nginx) would hold events back.
      "x-accel-buffering": "no",
    });
    let ended = false;
    let wake: (() => void) | undefined;
    const { slot } = opened;
    const stream: OpenStream = {
      tokenId: slot.tokenId,
      end: (hard = false, comment?: string) => {
        if (ended && !hard) return;
        ended = true;
        wake?.();
        if (!res.writableEnded) res.end(comment);
        // A client that stopped reading would keep the connection (and a shutting-down
        // server) open until it hangs up: the connection served only this stream, so it goes too.
        if (hard) res.socket?.destroy();
      },
      recheck: () => {
        opened.source.recheck().catch((err: unknown) => {
          request.log.info({ err }, "event stream ended: the caller may no longer read events");
          stream.end();
        });
      },
    };
    this.#open.add(stream);
    // The client is gone (or half-closed its side): nothing more can reach it, so the
    // connection is closed at once rather than left to linger with unread bytes.
    res.on("close", () => stream.end(true));
    const socket = res.socket;
    if (socket) {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    }
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wake = undefined;
          resolve();
        }, ms);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });
    // Backpressure: a slow client stops the polling instead of filling the gateway's memory;
    // one that reads nothing for two heartbeats is cut off.
    const stalled = options.heartbeatMs * 2;
    const write = async (chunk: string) => {
      if (ended || res.write(chunk)) return;
      const drained = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), stalled);
        const done = () => {
          clearTimeout(timer);
          resolve(true);
        };
        res.once("drain", done).once("close", done);
      });
      if (!drained) {
        request.log.info("event stream ended: the client stopped reading");
        stream.end(true);
      }
    };
    const heartbeat = setInterval(() => {
      if (ended || res.writableNeedDrain) return;
      res.write(`: heartbeat ${new Date(this.#now()).toISOString()}\n\n`);
      void this.#slots.renew(slot.tokenId, slot.id, this.#now(), this.leaseMs).catch(() => {});
      stream.recheck();
    }, options.heartbeatMs);
    try {
      await write(`retry: ${RECONNECT_MS}\n: connected\n\n`);
      let batch = opened.first;
      for (;;) {
        for (const e of batch.events) await write(sseMessage(e.id, e.payloadJson));
        if (ended) break;
        const position = batch.position;
        if (batch.caughtUp) await pause(options.pollMs);
        if (ended) break;
        try {
          batch = await opened.source.poll(position);
        } catch (err) {
          request.log.warn({ err }, "event stream: poll failed; retrying");
          batch = { ...batch, events: [], position, caughtUp: true };
          await pause(POLL_RETRY_MS);
        }
      }
    } finally {
      clearInterval(heartbeat);
      stream.end();
      this.#open.delete(stream);
      await slot.release();
    }
  }

  /**
   * A token was revoked: its streams end now, with REVOKED_COMMENT as their last line. Called
   * from the revocation event (cache-purge.ts), on every gateway instance; a stream checks
   * `ended` before each write, so nothing polled after this call reaches the client.
   */
  revoke(tokenId: string): number {
    let ended = 0;
    for (const s of this.#open) {
      if (s.tokenId !== tokenId) continue;
      s.end(false, REVOKED_COMMENT);
      ended++;
    }
    return ended;
  }

  /** Runs every stream's access checks now (a grant changed: delegated streams may have to end). */
  recheckAll(): void {
    for (const s of this.#open) s.recheck();
  }

  /** Ends every open stream (the gateway is shutting down; clients reconnect elsewhere). */
  closeAll(): void {
    for (const s of this.#open) s.end(true);
    for (const socket of this.#sockets) socket.destroy();
  }
}
