import type { Queryable } from "@platform/kit/db";
import {
  type Keyed,
  keyset,
  type PageQuery,
  type Params,
  params,
  positionValue,
  type SortKey,
} from "@platform/kit/keyset";
import type { Scope } from "@platform/kit/scopes";
import type { ManagedFilters } from "../domain/listing.js";
import type { OrganizationRecord } from "../domain/model.js";
import { date, toOrganization } from "./rows.js";
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

export interface PartnerReads {
  /** The parent's children under active (not revoked) relationships. */
  listManagedOrganizations(parentOrgId: string, query: ManagedQuery): Promise<Keyed<ManagedOrganizationRow>[]>;
}

function filterSql(f: ManagedFilters, p: Params): string[] {
  const where: string[] = [];
  if (f.search !== "") where.push(`strpos(lower(o.name), ${p.add(f.search.toLowerCase())}) > 0`);
  if (f.industry !== "") where.push(`o.industry = ${p.add(f.industry)}`);
  if (f.licenseTier !== undefined) where.push(`o.license_tier = ${p.add(f.licenseTier)}`);
  if (f.hasActiveIssues !== undefined) where.push(`o.has_active_issues = ${p.add(f.hasActiveIssues)}`);
  return where;
}

export function partnerReads(q: Queryable): PartnerReads {
  return {
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
  };
}
