import type { Db, Queryable, Row } from "@platform/kit/db";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { problem } from "@platform/kit/problems";
import type { Scope } from "@platform/kit/scopes";
import type { OrganizationRecord, PartnerRelationshipRecord, TokenRecord } from "../domain/model.js";
import { type AuditReads, type AuditWrites, auditReads, auditWrites } from "./audit.store.js";
import { type PartnerReads, partnerReads } from "./partner.store.js";
import { date, dateOrNull, textOrNull, toOrganization } from "./rows.js";
import { type UserReads, type UserWrites, userReads, userWrites } from "./user.store.js";

export interface OrganizationListItem extends OrganizationRecord {
  /** The active parent when the organization is a managed child. */
  parentOrgId: string | null;
}

/** A state change that may have been a no-op (repeated revocations keep the first time). */
export interface Changed<T> {
  record: T;
  changed: boolean;
}

export type OrganizationView = OrganizationRecord & { administratorDisplayName: string };

export interface IdentityReads extends UserReads, PartnerReads, AuditReads {
  /** The organization with its administrator's display name (one query: the hot read path). */
  findOrganization(id: string): Promise<OrganizationView | undefined>;
  /** Every organization by name, with its active parent. */
  listOrganizations(): Promise<OrganizationListItem[]>;
  findToken(id: string): Promise<TokenRecord | undefined>;
  findTokenByHash(keyHash: string): Promise<TokenRecord | undefined>;
  findTokens(ids: readonly string[]): Promise<TokenRecord[]>;
  /** Newest first, optionally of one organization. */
  listTokens(orgId?: string): Promise<TokenRecord[]>;
  findRelationship(parentOrgId: string, childOrgId: string): Promise<PartnerRelationshipRecord | undefined>;
  findActiveParentOrgId(childOrgId: string): Promise<string | undefined>;
}

export interface IdentityWrites extends IdentityReads, UserWrites, AuditWrites {
  /** False when the organization already exists (nothing written). */
  insertOrganization(org: OrganizationRecord): Promise<boolean>;
  /**
   * The organization, row-locked until the transaction ends: writes that check an org-wide
   * invariant (seat cap, last administrator) take this lock first, so they run one at a time.
   */
  lockOrganization(id: string): Promise<OrganizationRecord | undefined>;
  /** Writes the organization's editable fields, version and update time. */
  updateOrganization(org: OrganizationRecord): Promise<void>;
  insertToken(token: TokenRecord): Promise<void>;
  /** Undefined for an unknown token. */
  revokeToken(id: string, at: Date): Promise<Changed<TokenRecord> | undefined>;
  /** Creates, updates or re-activates a relationship; re-activation starts a new relationship. */
  upsertRelationship(
    parentOrgId: string,
    childOrgId: string,
    grantedScopes: readonly Scope[],
    at: Date,
  ): Promise<PartnerRelationshipRecord>;
  /** Undefined for an unknown relationship. */
  revokeRelationship(
    parentOrgId: string,
    childOrgId: string,
    at: Date,
  ): Promise<Changed<PartnerRelationshipRecord> | undefined>;
  /** Writes an outbox row in the same transaction as the change it announces. */
  enqueue(event: OutboxEvent): Promise<string>;
}

export interface IdentityStore extends IdentityReads {
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (w: IdentityWrites) => Promise<T>): Promise<T>;
}

function isViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === "23505" && e.constraint === constraint;
}

function toToken(r: Row): TokenRecord {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    name: String(r.name),
    keyHash: String(r.key_hash),
    keyPreview: String(r.key_preview),
    scopes: r.scopes as Scope[],
    expiresAt: dateOrNull(r.expires_at),
    revokedAt: dateOrNull(r.revoked_at),
    createdAt: date(r.created_at),
  };
}

function toRelationship(r: Row): PartnerRelationshipRecord {
  return {
    parentOrgId: String(r.parent_org_id),
    childOrgId: String(r.child_org_id),
    grantedScopes: r.granted_scopes as Scope[],
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    revokedAt: dateOrNull(r.revoked_at),
  };
}

function readsOn(q: Queryable): IdentityReads {
  return {
    ...userReads(q),
    ...partnerReads(q),
    ...auditReads(q),
    async findOrganization(id) {
      const [row] = await q.query(
        `SELECT o.*, u.display_name AS administrator_display_name
           FROM identity.organizations o
           LEFT JOIN identity.users u ON u.id = o.administrator_user_id
          WHERE o.id = $1`,
        [id],
      );
      return row && { ...toOrganization(row), administratorDisplayName: String(row.administrator_display_name ?? "") };
    },
    async listOrganizations() {
      const rows = await q.query(
        `SELECT o.*, p.parent_org_id FROM identity.organizations o
         LEFT JOIN identity.partner_relationships p ON p.child_org_id = o.id AND p.revoked_at IS NULL
         ORDER BY o.name, o.id`,
      );
      return rows.map((r) => ({ ...toOrganization(r), parentOrgId: textOrNull(r.parent_org_id) }));
    },
    async findToken(id) {
      const [row] = await q.query("SELECT * FROM identity.api_tokens WHERE id = $1", [id]);
      return row && toToken(row);
    },
    async findTokenByHash(keyHash) {
      const [row] = await q.query("SELECT * FROM identity.api_tokens WHERE key_hash = $1", [keyHash]);
      return row && toToken(row);
    },
    async findTokens(ids) {
      if (ids.length === 0) return [];
      const rows = await q.query("SELECT * FROM identity.api_tokens WHERE id = ANY($1::text[])", [ids]);
      return rows.map(toToken);
    },
    async listTokens(orgId) {
      const rows = await q.query(
        `SELECT * FROM identity.api_tokens WHERE ($1::text IS NULL OR org_id = $1)
         ORDER BY created_at DESC, id DESC`,
        [orgId ?? null],
      );
      return rows.map(toToken);
    },
    async findRelationship(parentOrgId, childOrgId) {
      const [row] = await q.query(
        "SELECT * FROM identity.partner_relationships WHERE parent_org_id = $1 AND child_org_id = $2",
        [parentOrgId, childOrgId],
      );
      return row && toRelationship(row);
    },
    async findActiveParentOrgId(childOrgId) {
      const [row] = await q.query<{ parent_org_id: string }>(
        "SELECT parent_org_id FROM identity.partner_relationships WHERE child_org_id = $1 AND revoked_at IS NULL",
        [childOrgId],
      );
      return row?.parent_org_id;
    },
  };
}

/** The store's writes within the caller's transaction (`idempotentRpc` and `consumeOnce` open one). */
export function identityWrites(q: Queryable): IdentityWrites {
  const reads = readsOn(q);
  return {
    ...reads,
    ...userWrites(q),
    ...auditWrites(q),
    async insertOrganization(o) {
      const rows = await q.query(
        `INSERT INTO identity.organizations (id, name, primary_email_domain, email_domains, administrator_user_id,
           industry, employee_count, logo_url, crm_org_id, partner_admin, has_active_issues, license_tier, seat_total,
           features, license_as_of, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15, $16, $17, $18)
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          o.id,
          o.name,
          o.primaryEmailDomain,
          o.emailDomains,
          o.administratorUserId,
          o.industry,
          o.employeeCount,
          o.logoUrl,
          o.crmOrgId,
          o.partnerAdmin,
          o.hasActiveIssues,
          o.licenseTier,
          o.seatTotal,
          JSON.stringify(o.features),
          o.licenseAsOf,
          o.version,
          o.createdAt,
          o.updatedAt,
        ],
      );
      return rows.length > 0;
    },
    async lockOrganization(id) {
      const [row] = await q.query("SELECT * FROM identity.organizations WHERE id = $1 FOR UPDATE", [id]);
      return row && toOrganization(row);
    },
    async updateOrganization(o) {
      await q.query(
        `UPDATE identity.organizations SET name = $2, primary_email_domain = $3, industry = $4, employee_count = $5,
           version = $6, updated_at = $7
         WHERE id = $1`,
        [o.id, o.name, o.primaryEmailDomain, o.industry, o.employeeCount, o.version, o.updatedAt],
      );
    },
    async insertToken(t) {
      await q.query(
        `INSERT INTO identity.api_tokens (id, org_id, name, key_hash, key_preview, scopes, expires_at, revoked_at,
           created_at)
         VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9)`,
        [t.id, t.orgId, t.name, t.keyHash, t.keyPreview, t.scopes, t.expiresAt, t.revokedAt, t.createdAt],
      );
    },
    async revokeToken(id, at) {
      // The conditional update takes the row lock, so of two concurrent revocations one changes it.
      const [row] = await q.query(
        "UPDATE identity.api_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING *",
        [id, at],
      );
      if (row) return { record: toToken(row), changed: true };
      const existing = await reads.findToken(id);
      return existing && { record: existing, changed: false };
    },
    async upsertRelationship(parentOrgId, childOrgId, grantedScopes, at) {
      const rows = await q
        .query(
          `INSERT INTO identity.partner_relationships
           (parent_org_id, child_org_id, granted_scopes, created_at, updated_at, revoked_at)
         VALUES ($1, $2, $3::text[], $4, $4, NULL)
         ON CONFLICT (parent_org_id, child_org_id) DO UPDATE SET
           granted_scopes = EXCLUDED.granted_scopes,
           updated_at = EXCLUDED.updated_at,
           created_at = CASE WHEN partner_relationships.revoked_at IS NULL
             THEN partner_relationships.created_at ELSE EXCLUDED.created_at END,
           revoked_at = NULL
         RETURNING *`,
          [parentOrgId, childOrgId, grantedScopes, at],
        )
        .catch((err: unknown) => {
          // The index, not the caller's earlier check, is what holds under concurrent grants.
          if (isViolation(err, "partner_relationships_one_active_parent")) {
            throw problem("invalid-field", `Organization ${childOrgId} already has an active partner parent.`, {
              field: "childOrgId",
            });
          }
          throw err;
        });
      const [row] = rows;
      if (!row) throw new Error("upsert returned no row");
      return toRelationship(row);
    },
    async revokeRelationship(parentOrgId, childOrgId, at) {
      const [row] = await q.query(
        `UPDATE identity.partner_relationships SET revoked_at = $3, updated_at = $3
         WHERE parent_org_id = $1 AND child_org_id = $2 AND revoked_at IS NULL RETURNING *`,
        [parentOrgId, childOrgId, at],
      );
      if (row) return { record: toRelationship(row), changed: true };
      const existing = await reads.findRelationship(parentOrgId, childOrgId);
      return existing && { record: existing, changed: false };
    },
    enqueue: (event) => enqueueEvent(q, "identity", event),
  };
}

/** The identity store on a service database (Postgres or the embedded PGlite). */
export function pgIdentityStore(db: Db): IdentityStore {
  return { ...readsOn(db), tx: (fn) => db.tx((q) => fn(identityWrites(q))) };
}
