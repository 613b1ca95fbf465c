import type { Db, Queryable, Row } from "@platform/kit/db";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { problem } from "@platform/kit/problems";
import type { Scope } from "@platform/kit/scopes";
import type {
  FeatureSet,
  LicenseTierSlug,
  OrganizationRecord,
  PartnerRelationshipRecord,
  TokenRecord,
  UserRecord,
} from "../domain/model.js";

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

export interface IdentityReads {
  /** The organization with its administrator's display name (one query: the hot read path). */
  findOrganization(id: string): Promise<OrganizationView | undefined>;
  /** Every organization by name, with its active parent. */
  listOrganizations(): Promise<OrganizationListItem[]>;
  /** Active users whose invitation is accepted or was sent at or after `pendingSince`. */
  countSeatHolders(orgId: string, pendingSince: Date): Promise<number>;
  findToken(id: string): Promise<TokenRecord | undefined>;
  findTokenByHash(keyHash: string): Promise<TokenRecord | undefined>;
  findTokens(ids: readonly string[]): Promise<TokenRecord[]>;
  /** Newest first, optionally of one organization. */
  listTokens(orgId?: string): Promise<TokenRecord[]>;
  findRelationship(parentOrgId: string, childOrgId: string): Promise<PartnerRelationshipRecord | undefined>;
  findActiveParentOrgId(childOrgId: string): Promise<string | undefined>;
}

export interface IdentityWrites extends IdentityReads {
  /** False when the organization already exists (nothing written). */
  insertOrganization(org: OrganizationRecord): Promise<boolean>;
  insertUser(user: UserRecord): Promise<void>;
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

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function toOrganization(r: Row): OrganizationRecord {
  return {
    id: String(r.id),
    name: String(r.name),
    primaryEmailDomain: String(r.primary_email_domain),
    emailDomains: r.email_domains as string[],
    administratorUserId: String(r.administrator_user_id),
    industry: String(r.industry),
    employeeCount: Number(r.employee_count),
    logoUrl: textOrNull(r.logo_url),
    crmOrgId: textOrNull(r.crm_org_id),
    partnerAdmin: Boolean(r.partner_admin),
    licenseTier: r.license_tier as LicenseTierSlug,
    seatTotal: Number(r.seat_total),
    features: r.features as FeatureSet,
    licenseAsOf: date(r.license_as_of),
    version: Number(r.version),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
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
    async countSeatHolders(orgId, pendingSince) {
      const [row] = await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM identity.users
         WHERE org_id = $1 AND active AND (invitation_status = 'accepted' OR invited_at >= $2)`,
        [orgId, pendingSince],
      );
      return row?.n ?? 0;
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

function writesOn(q: Queryable): IdentityWrites {
  const reads = readsOn(q);
  return {
    ...reads,
    async insertOrganization(o) {
      const rows = await q.query(
        `INSERT INTO identity.organizations (id, name, primary_email_domain, email_domains, administrator_user_id,
           industry, employee_count, logo_url, crm_org_id, partner_admin, license_tier, seat_total, features,
           license_as_of, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16, $17)
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
    async insertUser(u) {
      await q.query(
        `INSERT INTO identity.users (id, org_id, email, first_name, last_name, display_name, title, department,
           phone_number, profile_image_url, role, active, invitation_status, invited_at, invited_by_user_id,
           last_login_at, two_factor_enabled, crm_user_id, version, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
        [
          u.id,
          u.orgId,
          u.email,
          u.firstName,
          u.lastName,
          u.displayName,
          u.title,
          u.department,
          u.phoneNumber,
          u.profileImageUrl,
          u.role,
          u.active,
          u.invitationStatus,
          u.invitedAt,
          u.invitedByUserId,
          u.lastLoginAt,
          u.twoFactorEnabled,
          u.crmUserId,
          u.version,
          u.createdAt,
          u.updatedAt,
        ],
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
  return { ...readsOn(db), tx: (fn) => db.tx((q) => fn(writesOn(q))) };
}
