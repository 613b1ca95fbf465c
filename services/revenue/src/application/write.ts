import { idempotentMethodWriter } from "@platform/kit/idempotent-method";
import { txStore } from "../store/index.js";

export type { WriteDeps } from "@platform/kit/idempotent-rpc";

/**
 * A write RPC of the public API: once per Idempotency-Key, in one transaction that holds the
 * key's record, the change and its outbox rows.
 * Named by its method descriptor (`XService.method.y`), which carries both schemas.
 */
export const idempotentWrite = idempotentMethodWriter(txStore);

/**
 * `idempotentWrite` for a write that only inserts what its checks, made before it, allow: the
 * key's record, the change and its outbox rows go out as one statement. Its store's reads throw.
 */
export const idempotentInsert = idempotentMethodWriter(txStore, { writesOnly: true });
