import type { Queryable } from "@platform/kit/db";
import type { OrganizationRecord } from "../domain/model.js";
import { textOrNull, toOrganization } from "./rows.js";

export interface OrganizationListItem extends OrganizationRecord {
  /** The active parent when the organization is a managed child. */
  parentOrgId: string | null;
}

export type OrganizationView = OrganizationRecord & { administratorDisplayName: string };

/** The organizations (tenants) and their licence. */
export interface OrganizationStore {
  /** The organization with its administrator's display name (one query: the hot read path). */
  findOrganization(id: string): Promise<OrganizationView | undefined>;
  /** Every organization by name, with its active parent. */
  listOrganizations(): Promise<OrganizationListItem[]>;
  /** False when the organization already exists (nothing written). */
  insertOrganization(org: OrganizationRecord): Promise<boolean>;
  /**
   * The organization, row-locked until the transaction ends: writes that check an org-wide
   * invariant (seat cap, last administrator) take this lock first, so they run one at a time.
   */
  lockOrganization(id: string): Promise<OrganizationRecord | undefined>;
  /** Writes the organization's editable fields, version and update time. */
  updateOrganization(org: OrganizationRecord): Promise<void>;
}

export function organizationStore(q: Queryable): OrganizationStore {
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
  };
}
