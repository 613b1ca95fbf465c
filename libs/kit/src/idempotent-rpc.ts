import { type DescMessage, fromJson, type JsonValue, type MessageShape, toJson } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { Clock } from "./clock.js";
import { apiContext } from "./connect.js";
import { IDEMPOTENT_REPLAY_HEADER } from "./context.js";
import type { Db, Queryable } from "./db.js";
import { hashRequest, runIdempotent } from "./idempotency.js";
import { problem } from "./problems.js";

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
): Promise<MessageShape<O>> {
  const caller = apiContext(ctx);
  if (!caller.idempotencyKey)
    throw problem("idempotency-key-required", "This write requires an Idempotency-Key header.");
  const result = await runIdempotent(
    deps.db,
    {
      tokenId: caller.tokenId,
      ...(caller.parentOrgId ? { actingOrgId: caller.orgId } : {}),
      key: caller.idempotencyKey,
      requestHash: hashRequest({ rpc: request.schema.typeName, body: toJson(request.schema, request.message) }),
    },
    deps.clock,
    async (q) => ({ status: 200, body: toJson(responseSchema, await fn(q)) }),
  );
  if (result.replayed) ctx.responseHeader.set(IDEMPOTENT_REPLAY_HEADER, "true");
  return fromJson(responseSchema, result.body as JsonValue);
}
