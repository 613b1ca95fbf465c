// What the fakes of the gateway's tests share: timestamps, the in-memory keyset page, and the
// base class that records integrator RPCs, replays Idempotency-Keys and injects failures.
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { Clock } from "@platform/kit/clock";
import { apiContext } from "@platform/kit/connect";
import { IDEMPOTENT_REPLAY_HEADER, type RequestContext } from "@platform/kit/context";
import { type CursorCodec, createCursorCodec } from "@platform/kit/cursor";
import { pageOf } from "@platform/kit/pagination";
import { type ProblemName, problem } from "@platform/kit/problems";

export const ts = (iso: string) => timestampFromDate(new Date(iso));

export const millis = (t: Timestamp | undefined) => (t ? timestampDate(t).getTime() : Number.NEGATIVE_INFINITY);

/** The fakes' loose email check: what they accept, the gateway passes on. */
export const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** The plain-object form of a message's init, which spreads cleanly over defaults. */
export type Init<Desc extends DescMessage> = Exclude<MessageInitShape<Desc>, MessageShape<Desc>>;

/** Sort keys of a fake list: the REST name → the value it orders by. */
/** A verified integrator context, as apiContext returns it. */
type ApiContext = ReturnType<typeof apiContext>;

export type SortKeys<T> = Record<string, (row: T) => string | number>;

/** A keyset page over rows sorted in memory, with cursors the gateway can verify. */
function fakePage<T extends { id: string }>(
  rows: T[],
  req: { cursor: string; limit: number; sort: string },
  keys: SortKeys<T>,
  codec: CursorCodec,
): { items: T[]; nextCursor: string } {
  const descending = req.sort.startsWith("-");
  const key = keys[descending ? req.sort.slice(1) : req.sort];
  if (!key) throw new Error(`fake cannot sort by ${req.sort}`);
  const sorted = [...rows].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    const order = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    return descending ? -order : order;
  });
  const after = req.cursor ? String(codec.decode(req.cursor, req.sort)[1]) : undefined;
  const start = after === undefined ? 0 : sorted.findIndex((r) => r.id === after) + 1;
  const page = pageOf(sorted.slice(start, start + req.limit + 1), req.limit, (r) => [key(r), r.id], codec, req.sort);
  return { items: page.items, nextCursor: page.nextCursor ?? "" };
}

const stable = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));

/**
 * What the fake services share: the integrator RPCs they received with their verified
 * contexts, writes that replay an Idempotency-Key like the services' idempotentRpc does, and
 * failures a test injects.
 */
export abstract class FakeService {
  /** Every integrator RPC as the service received it, in order. */
  readonly received: { method: string; message: unknown }[] = [];
  /** Contexts of the integrator calls, as the service verified them. */
  readonly contexts: RequestContext[] = [];
  /** The X-Platform-Org-Id header of each integrator call. */
  readonly orgIdHeaders: (string | null)[] = [];
  /** The traceparent header of each call received (null: none). */
  readonly traceparents: (string | null)[] = [];
  /** Makes the next call of the service throw this. */
  failNext: Error | undefined;
  /** Set by the harness: cursors must verify with the gateway's secret. */
  cursors: CursorCodec = createCursorCodec("unset");
  protected readonly clock: Clock;
  readonly #idempotency = new Map<string, { request: string; response: unknown }>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** The last request the service received for one RPC (e.g. "listUsers"). */
  lastRequest<T>(method: string): T | undefined {
    return this.received.findLast((r) => r.method === method)?.message as T | undefined;
  }

  /** Records an integrator RPC and verifies its context. */
  protected call(ctx: HandlerContext, method: string, message: unknown) {
    const c = apiContext(ctx);
    this.contexts.push(c);
    this.orgIdHeaders.push(ctx.requestHeader.get("x-platform-org-id"));
    this.traceparents.push(ctx.requestHeader.get("traceparent"));
    this.received.push({ method, message });
    this.maybeFail();
    return c;
  }

  /**
   * A write: recorded like any call, then one outcome per (token, acting-on org, key),
   * replayed with the replay header.
   */
  protected write<T>(ctx: HandlerContext, method: string, request: unknown, run: (c: ApiContext) => T): T {
    const c = this.call(ctx, method, request);
    if (!c.idempotencyKey) throw problem("idempotency-key-required", "This write requires an Idempotency-Key.");
    const scope = `${c.tokenId}|${c.parentOrgId ? c.orgId : ""}|${c.idempotencyKey}`;
    const fingerprint = stable({ method, request });
    const stored = this.#idempotency.get(scope);
    if (stored) {
      if (stored.request !== fingerprint) {
        throw problem("idempotency-key-conflict", "The Idempotency-Key was used for another request.");
      }
      ctx.responseHeader.set(IDEMPOTENT_REPLAY_HEADER, "true");
      return stored.response as T;
    }
    const response = run(c);
    this.#idempotency.set(scope, { request: fingerprint, response });
    return response;
  }

  /** A page of `rows` sorted by `req.sort`, with cursors signed like the gateway's. */
  protected page<T extends { id: string }>(
    rows: T[],
    req: { cursor: string; limit: number; sort: string },
    keys: SortKeys<T>,
  ): { items: T[]; nextCursor: string } {
    return fakePage(rows, req, keys, this.cursors);
  }

  /** A row of the caller's organization; another organization's row is as unknown as a missing one. */
  protected owned<T extends { orgId: string }>(
    row: T | undefined,
    orgId: string,
    notFound: ProblemName,
    detail: string,
  ): T {
    if (!row || row.orgId !== orgId) throw problem(notFound, detail);
    return row;
  }

  protected maybeFail(): void {
    const err = this.failNext;
    this.failNext = undefined;
    if (err) throw err;
  }
}
