import type { Queryable } from "@platform/kit/db";
import { type OutboxStore, type OutboxTx, outboxStores } from "@platform/kit/service-store";
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

type Aggregates = OrganizationStore & UserStore & TokenStore & PartnerStore & AuditStore;

/** The identity store within one transaction: every aggregate, and the outbox. */
export type TxStore = OutboxTx<Aggregates>;

export type Store = OutboxStore<Aggregates>;

/**
 * `txStore`: the store within the caller's transaction (`idempotentRpc` and `consumeOnce` open one).
 * `pgStore`: the identity store on a service database (Postgres or the embedded PGlite).
 */
export const { txStore, pgStore } = outboxStores(
  "identity",
  (q: Queryable): Aggregates => ({
    ...organizationStore(q),
    ...userStore(q),
    ...tokenStore(q),
    ...partnerStore(q),
    ...auditStore(q),
  }),
);
