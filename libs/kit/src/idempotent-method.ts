import type { DescMessage, DescMethodUnary, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { Clock } from "./clock.js";
import type { Db, Queryable } from "./db.js";
import { idempotentWriter, orReplay, replayOf, type WriteDeps, type WriterOptions } from "./idempotent-rpc.js";

/**
 * A public-API write of one service, named by its RPC: the request and response schemas are
 * the method's own, so a handler cannot pair a request with another RPC's response.
 */
export type IdempotentMethodWrite<W> = <I extends DescMessage, O extends DescMessage>(
  deps: WriteDeps,
  ctx: HandlerContext,
  method: DescMethodUnary<I, O>,
  request: MessageShape<I>,
  fn: (w: W) => Promise<MessageInitShape<O>>,
) => Promise<MessageShape<O>>;

/** `idempotentWriter(storeOf, options)` addressed by method descriptor (`XService.method.y`). */
export function idempotentMethodWriter<W>(
  storeOf: (q: Queryable) => W,
  options?: WriterOptions,
): IdempotentMethodWrite<W> {
  const write = idempotentWriter(storeOf, options);
  return (deps, ctx, method, message, fn) => write(deps, ctx, { schema: method.input, message }, method.output, fn);
}

/** `replayOf` addressed by method descriptor: the stored response when this write is a replay. */
export function replayOfMethod<I extends DescMessage, O extends DescMessage>(
  deps: { db: Db; clock: Clock },
  ctx: HandlerContext,
  method: DescMethodUnary<I, O>,
  message: MessageShape<I>,
): Promise<MessageShape<O> | undefined> {
  return replayOf(deps, ctx, { schema: method.input, message }, method.output);
}

/** `orReplay` addressed by method descriptor: `write()`, or the stored response when it fails and this is a replay. */
export function orReplayMethod<I extends DescMessage, O extends DescMessage>(
  deps: { db: Db; clock: Clock },
  ctx: HandlerContext,
  method: DescMethodUnary<I, O>,
  message: MessageShape<I>,
  write: () => Promise<MessageShape<O>>,
): Promise<MessageShape<O>> {
  return orReplay(deps, ctx, { schema: method.input, message }, method.output, write);
}
