import type { Db, Queryable } from "@platform/kit/db";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { type AuditStore, auditStore } from "./audit.store.js";
import { type OrganizationStore, organizationStore } from "./organization.store.js";
import { type PartnerStore, partnerStore } from "./partner.store.js";
import { type TokenStore, tokenStore } from "./token.store.js";
import { type UserStore, userStore } from "./user.store.js";

export type { DelegationAuditEntry } from "./audit.store.js";
export type { OrganizationListItem, OrganizationStore, OrganizationView } from "./organization.store.js";
export type { ManagedOrganizationRow } from "./partner.store.js";
export type { Changed } from "./rows.js";
export type { UserView } from "./user.store.js";

/** The identity store within one transaction: every aggregate, and the outbox. */
export interface TxStore extends OrganizationStore, UserStore, TokenStore, PartnerStore, AuditStore {
  /** Writes an outbox row in the same transaction as the change it announces. */
  enqueue(event: OutboxEvent): Promise<string>;
}

export interface Store extends OrganizationStore, UserStore, TokenStore, PartnerStore, AuditStore {
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (s: TxStore) => Promise<T>): Promise<T>;
}

function aggregates(q: Queryable) {
  return {
    ...organizationStore(q),
    ...userStore(q),
    ...tokenStore(q),
    ...partnerStore(q),
    ...auditStore(q),
  };
}

/** The store within the caller's transaction (`idempotentRpc` and `consumeOnce` open one). */
export function txStore(q: Queryable): TxStore {
  return { ...aggregates(q), enqueue: (event) => enqueueEvent(q, "identity", event) };
}

/** The identity store on a service database (Postgres or the embedded PGlite). */
export function pgStore(db: Db): Store {
  return { ...aggregates(db), tx: (fn) => db.tx((q) => fn(txStore(q))) };
}
