import { idempotentWriter } from "@platform/kit/idempotent-rpc";
import { txStore } from "../store/index.js";

export type { WriteDeps } from "@platform/kit/idempotent-rpc";

/**
 * A write RPC of the public API: once per Idempotency-Key, in one transaction that holds the
 * key's record, the change and its outbox rows.
 */
export const idempotentWrite = idempotentWriter(txStore);
