import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { idempotentRpc } from "@platform/kit/idempotent-rpc";
import { type SchedulingWrites, schedulingWrites } from "./store/scheduling.store.js";

export interface WriteDeps {
  db: Db;
  clock: Clock;
  /** Called after the transaction committed, so the outbox relay publishes at once. */
  committed: () => void;
}

/**
 * A write RPC of the public API: once per Idempotency-Key, in one transaction that holds the
 * key's record, the change and its outbox rows.
 */
export async function idempotentWrite<I extends DescMessage, O extends DescMessage>(
  deps: WriteDeps,
  ctx: HandlerContext,
  request: { schema: I; message: MessageShape<I> },
  responseSchema: O,
  fn: (w: SchedulingWrites) => Promise<MessageInitShape<O>>,
): Promise<MessageShape<O>> {
  const response = await idempotentRpc(deps, ctx, request, responseSchema, async (q) =>
    create(responseSchema, await fn(schedulingWrites(q))),
  );
  deps.committed();
  return response;
}
