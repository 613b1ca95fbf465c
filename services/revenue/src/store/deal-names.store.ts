import type { Queryable, Row } from "@platform/kit/db";
import type { DealSchemaRecord } from "../domain/deal-schema.js";
import type { AccountRef, ContactRef, UserRef } from "../domain/model.js";
import { toSchema, withDates } from "./rows.js";

// What a new deal names, read in one statement: a create's checks then cost one round trip
// where one query per name would cost four (on this kind of VM a round trip to Postgres costs
// more CPU than these look-ups: docs/benchmarks.md).

/** What a write names, as revenue knows it now: undefined where it is not known (or not named). */
export interface DealNames {
  /** From the projection of crm-data's accounts. */
  account: AccountRef | undefined;
  contact: ContactRef | undefined;
  /** The user `ownerId` names or, with none named, the org's administrator (projections of identity). */
  owner: UserRef | undefined;
  /** The schema named, or the org's default. */
  schema: DealSchemaRecord | undefined;
}

export interface DealNamesStore {
  findDealNames(
    orgId: string,
    names: {
      accountId: string;
      contactId: string | undefined;
      ownerId: string | undefined;
      schemaId: string | undefined;
    },
  ): Promise<DealNames>;
}

const FIND_DEAL_NAMES = `SELECT
  (SELECT jsonb_build_object('id', a.id, 'name', a.name)
     FROM revenue.account_refs a WHERE a.id = $2 AND a.org_id = $1) AS account,
  (SELECT jsonb_build_object('id', c.id, 'accountId', c.account_id, 'displayName', c.display_name, 'email', c.email)
     FROM revenue.contact_refs c WHERE c.id = $3::text AND c.org_id = $1) AS contact,
  CASE WHEN $4::text IS NULL
    THEN (SELECT jsonb_build_object('userId', o.administrator_user_id, 'displayName', o.administrator_display_name)
            FROM revenue.org_refs o WHERE o.org_id = $1)
    ELSE (SELECT jsonb_build_object('userId', u.id, 'displayName', u.display_name)
            FROM revenue.user_refs u WHERE u.id = $4::text AND u.org_id = $1)
  END AS owner,
  (SELECT to_jsonb(s) FROM revenue.deal_schemas s
     WHERE s.org_id = $1 AND (s.id = $5::text OR ($5::text IS NULL AND s.is_default))) AS schema_row`;

export function dealNamesStore(q: Queryable): DealNamesStore {
  return {
    async findDealNames(orgId, { accountId, contactId, ownerId, schemaId }) {
      const [r] = await q.query<Row>(FIND_DEAL_NAMES, [
        orgId,
        accountId,
        contactId ?? null,
        ownerId ?? null,
        schemaId ?? null,
      ]);
      return {
        account: (r?.account as AccountRef | null) ?? undefined,
        contact: (r?.contact as ContactRef | null) ?? undefined,
        owner: (r?.owner as UserRef | null) ?? undefined,
        schema: r?.schema_row ? toSchema(withDates(r.schema_row as Row)) : undefined,
      };
    },
  };
}
