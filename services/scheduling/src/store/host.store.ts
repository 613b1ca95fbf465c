import type { Queryable, Row } from "@platform/kit/db";
import type { WorkingHours } from "../domain/types.js";
import type { HostRecord } from "../model.js";
import { toHost } from "./rows.js";

/** A user as identity's events describe it, at identity's `version` of it. */
export interface IdentityUser {
  userId: string;
  orgId: string;
  email: string;
  firstName: string;
  lastName: string;
  displayName: string;
  version: number;
}

/**
 * Applies identity's view of a user to the hosts projection: a new host gets `timeZone` and
 * `workingHours`; a known one takes identity's names and address only (its zone and hours are
 * scheduling's, set by the sandbox or later by the host) and only from a newer version.
 * Returns whether a row changed.
 */
export async function applyIdentityUser(
  q: Queryable,
  u: IdentityUser,
  defaults: { timeZone: string; workingHours: readonly WorkingHours[] },
): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO scheduling.hosts
       (user_id, org_id, email, first_name, last_name, display_name, time_zone, working_hours, identity_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)
     ON CONFLICT (user_id) DO UPDATE SET
       email = EXCLUDED.email, first_name = EXCLUDED.first_name, last_name = EXCLUDED.last_name,
       display_name = EXCLUDED.display_name, identity_version = EXCLUDED.identity_version
     WHERE scheduling.hosts.identity_version < EXCLUDED.identity_version
       AND scheduling.hosts.org_id = EXCLUDED.org_id
     RETURNING user_id`,
    [
      u.userId,
      u.orgId,
      u.email,
      u.firstName,
      u.lastName,
      u.displayName,
      defaults.timeZone,
      JSON.stringify(defaults.workingHours),
      u.version,
    ],
  );
  return rows.length > 0;
}

/** A host as the projection holds it, with the identity version it last applied; undefined when unknown. */
export async function findHost(
  q: Queryable,
  userId: string,
): Promise<(HostRecord & { identityVersion: number }) | undefined> {
  const [row] = await q.query<Row>("SELECT * FROM scheduling.hosts WHERE user_id = $1", [userId]);
  return row && { ...toHost(row), identityVersion: Number(row.identity_version) };
}
