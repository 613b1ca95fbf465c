import {
  create,
  type DescMessage,
  fromJson,
  type JsonValue,
  type MessageInitShape,
  type MessageShape,
  toJson,
} from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { Clock } from "./clock.js";
import { apiContext } from "./connect.js";
import { IDEMPOTENT_REPLAY_HEADER } from "./context.js";
import type { Db, Queryable } from "./db.js";
import { checkDeadline } from "./deadline.js";
import {
  fingerprintHash,
  hashRequest,
  type IdempotencyScope,
  type IdempotentResult,
  runIdempotent,
  runIdempotentStatement,
  storedResponse,
} from "./idempotency.js";
import { ProblemError, problem } from "./problems.js";

/** The key of this write: scoped to the token, and to the child org when delegating. */
function scopeOf<I extends DescMessage>(
  ctx: HandlerContext,
  request: { schema: I; message: MessageShape<I> },
): IdempotencyScope {
  const caller = apiContext(ctx);
  if (!caller.idempotencyKey)
    throw problem("idempotency-key-required", "This write requires an Idempotency-Key header.");
  return {
    tokenId: caller.tokenId,
    ...(caller.parentOrgId ? { actingOrgId: caller.orgId } : {}),
    key: caller.idempotencyKey,
    // Through the gateway: the HTTP request's parts, so a conflict names what differed; a direct
    // caller (service tests, admin tools): the RPC message itself.
    requestHash: caller.requestFingerprint
      ? fingerprintHash(caller.requestFingerprint)
      : hashRequest({ rpc: request.schema.typeName, body: toJson(request.schema, request.message) }),
  };
}

function answer<O extends DescMessage>(ctx: HandlerContext, responseSchema: O, result: IdempotentResult) {
  if (result.replayed) ctx.responseHeader.set(IDEMPOTENT_REPLAY_HEADER, "true");
  return fromJson(responseSchema, result.body as JsonValue);
}

/**
 * Runs a write RPC once per Idempotency-Key: the key (from the signed context) is scoped to
 * the token, and to the child org when delegating; the stored response is replayed for the
 * same request and a different request with the same key is 422 idempotency-key-conflict.
 * `fn` runs inside the transaction that records the key, so the write and its record commit
 * together.
 */
export async function idempotentRpc<I extends DescMessage, O extends DescMessage>(
  deps: { db: Db; clock: Clock },
  ctx: HandlerContext,
  request: { schema: I; message: MessageShape<I> },
  responseSchema: O,
  fn: (q: Queryable) => Promise<MessageShape<O>>,
  run: typeof runIdempotent = runIdempotent,
): Promise<MessageShape<O>> {
  let written: MessageShape<O> | undefined;
  const result = await run(deps.db, scopeOf(ctx, request), deps.clock, async (q) => {
    written = await fn(q);
    const body = toJson(responseSchema, written);
    // Past the call's deadline the gateway has answered 504: roll back rather than commit unseen.
    checkDeadline(ctx);
    return { status: 200, body };
  });
  // The first answer is the message whose JSON was just stored: parsing that JSON back would
  // give an equal message for 20–30 µs of CPU per write (docs/benchmarks/rpc.md, "Per-call
  // costs on the services' side").
  if (!result.replayed && written) return written;
  return answer(ctx, responseSchema, result);
}

/**
 * The stored response when this write is a replay of an earlier one, else undefined. Writes
 * that ask other services before their transaction call it first, so that a replay answers
 * what it answered the first time (not what those services say now) and costs no calls.
 */
export async function replayOf<I extends DescMessage, O extends DescMessage>(
  deps: { db: Db; clock: Clock },
  ctx: HandlerContext,
  request: { schema: I; message: MessageShape<I> },
  responseSchema: O,
): Promise<MessageShape<O> | undefined> {
  const stored = await storedResponse(deps.db, scopeOf(ctx, request), deps.clock);
  return stored && answer(ctx, responseSchema, stored);
}

export interface WriteDeps {
  db: Db;
  clock: Clock;
  /** Called after the transaction committed (identity empties its organization cache). */
  committed: () => void;
}

/** A public-API write of one service: `fn` gets the service's store bound to the write's transaction. */
export type IdempotentWrite<W> = <I extends DescMessage, O extends DescMessage>(
  deps: WriteDeps,
  ctx: HandlerContext,
  request: { schema: I; message: MessageShape<I> },
  responseSchema: O,
  fn: (w: W) => Promise<MessageInitShape<O>>,
) => Promise<MessageShape<O>>;

export interface WriterOptions {
  /**
   * The write reads nothing once it starts (it only inserts what its checks, made before,
   * allow): the key's record, the change and its outbox rows go out as one statement
   * (`runIdempotentStatement`) rather than a transaction of several. Its store's reads throw.
   * Errors of the checks before it should still give way to a replay (`orReplay`).
   */
  writesOnly?: boolean;
}

/**
 * The write helper of a service whose store is `storeOf(q)`: once per Idempotency-Key, in one
 * transaction that holds the key's record, the change and its outbox rows; the relay is
 * nudged after the commit.
 */
export function idempotentWriter<W>(storeOf: (q: Queryable) => W, options: WriterOptions = {}): IdempotentWrite<W> {
  const run = options.writesOnly ? runIdempotentStatement : runIdempotent;
  return async (deps, ctx, request, responseSchema, fn) => {
    const response = await idempotentRpc(
      deps,
      ctx,
      request,
      responseSchema,
      async (q) => create(responseSchema, await fn(storeOf(q))),
      run,
    );
    deps.committed();
    return response;
  };
}

/**
 * `write()`, unless it fails and the request is a replay: then what the key's first request
 * was answered (or 422 idempotency-key-conflict). For writes that check what they reference
 * before a `writesOnly` write, so a replay answers as the first time even when those checks
 * would now fail, at no cost to the first request (which today's `replayOf` first would be: a
 * round trip on every write).
 */
export async function orReplay<I extends DescMessage, O extends DescMessage>(
  deps: { db: Db; clock: Clock },
  ctx: HandlerContext,
  request: { schema: I; message: MessageShape<I> },
  responseSchema: O,
  write: () => Promise<MessageShape<O>>,
): Promise<MessageShape<O>> {
  try {
    return await write();
  } catch (err) {
    let replay: MessageShape<O> | undefined;
    try {
      replay = await replayOf(deps, ctx, request, responseSchema);
    } catch (replayErr) {
      // A key reused with another request is that problem; the look-up failing (the database
      // gone) leaves the write's own failure to answer.
      if (replayErr instanceof ProblemError) throw replayErr;
      throw err;
    }
    if (replay) return replay;
    throw err;
  }
}
