import type { Queryable, Row } from "@platform/kit/db";
import type { DealSchemaRecord } from "../domain/deal-schema.js";
import type { AccountRef, ContactRef, UserRef } from "../domain/model.js";
import { toSchema } from "./rows.js";

// What a new deal names, read in one statement: a create's checks then cost one round trip
// where one query per name would cost four (on this kind of VM a round trip to Postgres costs
// more CPU than these look-ups: docs/benchmarks/gateway.md, "POST /deals in two round trips").

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

// Plain columns, not to_jsonb of the rows: serialising the schema's jsonb columns again cost
// Postgres more than the three round trips it saved (docs/benchmarks/gateway.md, "POST /deals in
// two round trips").
const FIND_DEAL_NAMES = `SELECT a.id AS account_id, a.name AS account_name,
    c.id AS contact_id, c.account_id AS contact_account_id, c.display_name AS contact_display_name,
    c.email AS contact_email,
    COALESCE(u.id, o.administrator_user_id) AS owner_user_id,
    COALESCE(u.display_name, o.administrator_display_name) AS owner_display_name,
    s.*
  FROM (SELECT 1) AS one
  LEFT JOIN revenue.account_refs a ON a.id = $2 AND a.org_id = $1
  LEFT JOIN revenue.contact_refs c ON c.id = $3::text AND c.org_id = $1
  LEFT JOIN revenue.user_refs u ON u.id = $4::text AND u.org_id = $1
  LEFT JOIN revenue.org_refs o ON $4::text IS NULL AND o.org_id = $1
  LEFT JOIN revenue.deal_schemas s ON s.org_id = $1 AND (s.id = $5::text OR ($5::text IS NULL AND s.is_default))`;

const text = (v: unknown) => v as string;

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
      if (!r) throw new Error("findDealNames: the statement returns one row");
      return {
        account: r.account_id === null ? undefined : { id: text(r.account_id), name: text(r.account_name) },
        contact:
          r.contact_id === null
            ? undefined
            : {
                id: text(r.contact_id),
                accountId: text(r.contact_account_id),
                displayName: text(r.contact_display_name),
                email: text(r.contact_email),
              },
        owner:
          r.owner_user_id === null
            ? undefined
            : { userId: text(r.owner_user_id), displayName: text(r.owner_display_name) },
        schema: r.id === null ? undefined : toSchema(r),
      };
    },
  };
}
