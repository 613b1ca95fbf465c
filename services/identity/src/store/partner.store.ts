import type { Queryable } from "@platform/kit/db";
import type { Keyed, PageQuery, Params, SortKey } from "@platform/kit/keyset";
import { keyset, params, positionValue } from "@platform/kit/keyset";
import { problem } from "@platform/kit/problems";
import type { Scope } from "@platform/kit/scopes";
import type { ManagedFilters } from "../domain/listing.js";
import type { OrganizationRecord, PartnerRelationshipRecord } from "../domain/model.js";
import { type Changed, date, toOrganization, toRelationship } from "./rows.js";
import { holdsSeatSql } from "./user.store.js";

/** A child organization as its partner lists it. */
export interface ManagedOrganizationRow {
  org: OrganizationRecord;
  grantedScopes: Scope[];
  seatsUsed: number;
  relationshipCreatedAt: Date;
  /** The later of the relationship's and the child's last change. */
  updatedAt: Date;
}

const UPDATED_AT = "GREATEST(r.updated_at, o.updated_at)";

/** The sort keys of GET /partner/managed-organizations; createdAt is when the relationship started. */
export const MANAGED_SORT_KEYS: Record<string, SortKey> = {
  updatedAt: { expr: UPDATED_AT, type: "timestamptz", nullable: false },
  createdAt: { expr: "r.created_at", type: "timestamptz", nullable: false },
  name: { expr: "lower(o.name)", type: "text", nullable: false },
  "seats.total": { expr: "o.seat_total", type: "int", nullable: false },
};

export interface ManagedQuery extends PageQuery {
  filters: ManagedFilters;
  /** Invitations at or after this time still hold a seat. */
  pendingSince: Date;
}

/** Partner relationships (a parent organization managing children) and the children they manage. */
export interface PartnerStore {
  /** The parent's children under active (not revoked) relationships. */
  listManagedOrganizations(parentOrgId: string, query: ManagedQuery): Promise<Keyed<ManagedOrganizationRow>[]>;
  findRelationship(parentOrgId: string, childOrgId: string): Promise<PartnerRelationshipRecord | undefined>;
  findActiveParentOrgId(childOrgId: string): Promise<string | undefined>;
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
}

function isViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === "23505" && e.constraint === constraint;
}

function filterSql(f: ManagedFilters, p: Params): string[] {
  const where: string[] = [];
  if (f.search !== "") where.push(`strpos(lower(o.name), ${p.add(f.search.toLowerCase())}) > 0`);
  if (f.industry !== "") where.push(`o.industry = ${p.add(f.industry)}`);
  if (f.licenseTier !== undefined) where.push(`o.license_tier = ${p.add(f.licenseTier)}`);
  if (f.hasActiveIssues !== undefined) where.push(`o.has_active_issues = ${p.add(f.hasActiveIssues)}`);
  return where;
}

export function partnerStore(q: Queryable): PartnerStore {
  const store: PartnerStore = {
    async listManagedOrganizations(parentOrgId, { filters, sort, after, limit, pendingSince }) {
      const p = params();
      const since = p.add(pendingSince);
      const where = [`r.parent_org_id = ${p.add(parentOrgId)}`, "r.revoked_at IS NULL", ...filterSql(filters, p)];
      const page = keyset(sort.key, "o.id", sort.descending, after, p);
      const rows = await q.query(
        `SELECT o.*, r.granted_scopes, r.created_at AS relationship_created_at, ${UPDATED_AT} AS managed_updated_at,
                (SELECT count(*)::int FROM identity.users u WHERE u.org_id = o.id AND ${holdsSeatSql("u", since)})
                  AS seats_used,
                ${sort.key.expr} AS sort_value
           FROM identity.partner_relationships r JOIN identity.organizations o ON o.id = r.child_org_id
          WHERE ${[...where, page.where].join(" AND ")}
          ORDER BY ${page.orderBy}
          LIMIT ${p.add(limit)}`,
        p.values,
      );
      return rows.map((r) => ({
        item: {
          org: toOrganization(r),
          grantedScopes: r.granted_scopes as Scope[],
          seatsUsed: Number(r.seats_used),
          relationshipCreatedAt: date(r.relationship_created_at),
          updatedAt: date(r.managed_updated_at),
        },
        position: [positionValue(r.sort_value), String(r.id)],
      }));
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
      const existing = await store.findRelationship(parentOrgId, childOrgId);
      return existing && { record: existing, changed: false };
    },
  };
  return store;
}
