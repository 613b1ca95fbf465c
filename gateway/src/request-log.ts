import { randomUUID } from "node:crypto";
import { createNoopMeter, metrics } from "@opentelemetry/api";
import type { EventBus } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { Logger } from "@platform/kit/logger";
import { toBusMessage } from "@platform/kit/outbox";
import { quietLog } from "@platform/kit/quiet-log";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Token } from "./auth.js";
import { API_PREFIX } from "./route.js";

// The org's request log (GET /request-logs), written off the request path: after a response
// is sent, its summary joins an in-memory buffer, and the buffer goes out in batches (every
// REQUEST_LOG_FLUSH_MS or REQUEST_LOG_BATCH requests) as ONE message on platform.requestlogs.v1,
// which the request-logs service stores. Nothing here is awaited by a request: a slow or absent
// bus fills the bounded buffer, and what does not fit is dropped, counted and logged once a
// minute. Only requests whose API key was valid are recorded (they belong to an org).

declare module "fastify" {
  interface FastifyRequest {
    /** The request's valid API key, once authenticated (set even when a later check refuses it). */
    keyToken: Token | null;
  }
  interface FastifyReply {
    /** The problem the response carries (errors.ts sets it), for the request log. */
    problemName: string | null;
  }
}

/**
 * One request's summary in the canonical JSON form of platform.events.requestlogs.v1.RequestLogged
 * (empty fields left out), so a batch is one JSON.stringify and the consumer reads it with fromJson.
 * Never a body, a query string, a header or the key itself.
 */
export interface LoggedRequest {
  requestId: string;
  method: string;
  route: string;
  pathIds?: Record<string, string>;
  status: number;
  problemType?: string;
  durationMs: number;
  keyId: string;
  orgId: string;
  actingOn?: string;
  idempotencyKey?: string;
  /** When the request arrived, ISO 8601 UTC. */
  time: string;
}

/** Where batches go: the bus (busSink), or the request-logs service in the same process. */
export type RequestLogSink = (batch: { requests: LoggedRequest[] }) => Promise<void>;

export interface RequestLogOptions {
  /** Longest a summary waits in the buffer. */
  flushMs: number;
  /** Summaries per message; a full batch goes out at once. */
  batchSize: number;
  /** Summaries held while a batch is in flight; beyond it new ones are dropped (and counted). */
  maxBuffered: number;
}

export const REQUEST_LOG_DEFAULTS: RequestLogOptions = { flushMs: 100, batchSize: 500, maxBuffered: 10_000 };

/** How long closing waits for the last batch: a dead bus must not hold a shutdown. */
const CLOSE_WAIT_MS = 2_000;
const IDEMPOTENCY_KEY_MAX = 255;
const BUFFER_FULL = new Error("request log buffer full: the bus is slower than the requests");
const PATH_ID_MAX = 200;

/** Batches as CloudEvents on platform.requestlogs.v1, each under a fresh key: batches spread over the partitions. */
export function busSink(bus: EventBus, clock: Clock): RequestLogSink {
  return (batch) => {
    const id = randomUUID();
    const message = toBusMessage(
      { id, type: EVENT_TYPES.requestsLogged, source: "gateway", time: clock.now().toISOString(), data: batch },
      id,
    );
    return bus.publish(TOPICS.requestLogs, [message]);
  };
}

/** fastify's `/api/v1alpha1/deals/:dealId` as the API documents it, `/deals/{dealId}`; memoised per route. */
const templates = new Map<string, string>();
function routeTemplate(url: string): string {
  let template = templates.get(url);
  if (template === undefined) {
    const path = url.startsWith(API_PREFIX) ? url.slice(API_PREFIX.length) : url;
    template = path.replace(/:(\w+)/g, "{$1}");
    templates.set(url, template);
  }
  return template;
}

function pathIds(params: unknown): Record<string, string> | undefined {
  let ids: Record<string, string> | undefined;
  for (const name in params as Record<string, unknown>) {
    const value = (params as Record<string, unknown>)[name];
    if (typeof value !== "string") continue;
    ids ??= {};
    const id = value.length > PATH_ID_MAX ? value.slice(0, PATH_ID_MAX) : value;
    // A decoded path may hold NUL (`/deals/%00`), which Postgres text refuses: one such
    // summary would fail its whole batch's insert.
    ids[name] = id.includes("\u0000") ? id.replaceAll("\u0000", "\uFFFD") : id;
  }
  return ids;
}

/** The summary of an answered request, or undefined when it had no valid key. */
export function summarise(request: FastifyRequest, reply: FastifyReply, now: number): LoggedRequest | undefined {
  const token = request.keyToken;
  if (!token) return undefined;
  const elapsed = reply.elapsedTime;
  const record: LoggedRequest = {
    requestId: request.id,
    method: request.method,
    route: routeTemplate(request.routeOptions.url ?? ""),
    status: reply.statusCode,
    durationMs: Math.round(elapsed * 100) / 100,
    keyId: token.tokenId,
    orgId: token.orgId,
    time: new Date(now - elapsed).toISOString(),
  };
  const ids = pathIds(request.params);
  if (ids) record.pathIds = ids;
  if (reply.problemName) record.problemType = reply.problemName;
  const actingOn = request.admission?.delegation?.childOrgId;
  if (actingOn) record.actingOn = actingOn;
  const key = request.headers["idempotency-key"];
  if (typeof key === "string" && key !== "" && key.length <= IDEMPOTENCY_KEY_MAX) record.idempotencyKey = key;
  return record;
}

/** The buffer between the requests and the sink: bounded, flushed by size and by time. */
export class RequestLogBuffer {
  #buffer: LoggedRequest[] = [];
  #inFlight: Promise<void> | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #quiet;
  readonly #dropped;

  constructor(
    private readonly sink: RequestLogSink,
    logger: Logger,
    private readonly options: RequestLogOptions = REQUEST_LOG_DEFAULTS,
  ) {
    this.#quiet = quietLog(logger);
    const meter = metrics.getMeter("@platform/gateway");
    this.#dropped =
      meter === createNoopMeter()
        ? undefined
        : meter.createCounter("platform.request_log.dropped", {
            description:
              "Request summaries the gateway could not publish to the request log (buffer full, bus failing)",
          });
    this.#timer = setInterval(() => this.flush(), options.flushMs);
    this.#timer.unref();
  }

  /** Summaries waiting to go out. */
  get buffered(): number {
    return this.#buffer.length;
  }

  add(record: LoggedRequest): void {
    if (this.#buffer.length >= this.options.maxBuffered) {
      this.#drop(1, "buffer-full", undefined);
      return;
    }
    this.#buffer.push(record);
    if (this.#buffer.length >= this.options.batchSize) this.flush();
  }

  /** Sends one batch unless one is in flight (the next timer tick sends what waits meanwhile). */
  flush(): void {
    if (this.#inFlight || this.#buffer.length === 0) return;
    const requests =
      this.#buffer.length <= this.options.batchSize ? this.#buffer : this.#buffer.splice(0, this.options.batchSize);
    if (requests === this.#buffer) this.#buffer = [];
    let sent: Promise<void>;
    try {
      sent = this.sink({ requests });
    } catch (err) {
      sent = Promise.reject(err);
    }
    this.#inFlight = sent.then(
      () => {
        this.#quiet.recovered("request-log", "request log summaries are published again");
      },
      (err: unknown) => this.#drop(requests.length, "publish-failed", err),
    );
    void this.#inFlight.finally(() => {
      this.#inFlight = undefined;
      // A backlog does not wait for the timer.
      if (this.#buffer.length >= this.options.batchSize) this.flush();
    });
  }

  /** Stops the timer and sends what is buffered, waiting at most CLOSE_WAIT_MS. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    const deadline = Date.now() + CLOSE_WAIT_MS;
    while (Date.now() < deadline && (this.#inFlight || this.#buffer.length > 0)) {
      this.flush();
      const wait = new Promise<void>((resolve) => setTimeout(resolve, deadline - Date.now()).unref());
      await Promise.race([this.#inFlight ?? Promise.resolve(), wait]);
      // Let the settled batch's finally clear #inFlight.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  #drop(count: number, reason: "buffer-full" | "publish-failed", err: unknown): void {
    this.#dropped?.add(count, { reason });
    this.#quiet.failure(
      "request-log",
      err ?? BUFFER_FULL,
      "request log summaries dropped (the requests themselves were served)",
    );
  }
}

/**
 * Records every answered request that had a valid API key (see the top of this file). One
 * callback hook, no promise per request; the summary is built after the response was sent.
 */
export function installRequestLog(
  app: FastifyInstance,
  deps: { sink: RequestLogSink; clock: Clock; logger: Logger; options?: RequestLogOptions },
): RequestLogBuffer {
  const buffer = new RequestLogBuffer(deps.sink, deps.logger, deps.options);
  app.addHook("onResponse", (request, reply, done) => {
    const record = summarise(request, reply, deps.clock.now().getTime());
    if (record) buffer.add(record);
    done();
  });
  app.addHook("onClose", () => buffer.close());
  return buffer;
}
