import type { Queryable, Row } from "@platform/kit/db";
import { params } from "@platform/kit/keyset";
import { date } from "./rows.js";

/** One request a partner made on behalf of a child, as the gateway reported it. */
export interface DelegationAuditEntry {
  /** The gateway's event id. */
  id: string;
  parentOrgId: string;
  orgId: string;
  tokenId: string;
  method: string;
  path: string;
  status: number;
  requestId: string;
  time: Date;
}

export interface AuditFilter {
  parentOrgId?: string;
  orgId?: string;
  limit: number;
}

/** The delegation audit: what partners did on behalf of their children. */
export interface AuditStore {
  /** Newest first. */
  listDelegationAudit(filter: AuditFilter): Promise<DelegationAuditEntry[]>;
  /** False when an entry with that id exists already (nothing written). */
  insertDelegationAudit(entry: DelegationAuditEntry): Promise<boolean>;
}

function toEntry(r: Row): DelegationAuditEntry {
  return {
    id: String(r.id),
    parentOrgId: String(r.parent_org_id),
    orgId: String(r.org_id),
    tokenId: String(r.token_id),
    method: String(r.method),
    path: String(r.path),
    status: Number(r.status),
    requestId: String(r.request_id),
    time: date(r.time),
  };
}

export function auditStore(q: Queryable): AuditStore {
  return {
    async listDelegationAudit({ parentOrgId, orgId, limit }) {
      const p = params();
      const where = ["TRUE"];
      if (parentOrgId) where.push(`parent_org_id = ${p.add(parentOrgId)}`);
      if (orgId) where.push(`org_id = ${p.add(orgId)}`);
      const rows = await q.query(
        `SELECT * FROM identity.delegation_audit WHERE ${where.join(" AND ")}
         ORDER BY time DESC, id DESC LIMIT ${p.add(limit)}`,
        p.values,
      );
      return rows.map(toEntry);
    },
    async insertDelegationAudit(e) {
      const rows = await q.query(
        `INSERT INTO identity.delegation_audit (id, parent_org_id, org_id, token_id, method, path, status, request_id, time)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [e.id, e.parentOrgId, e.orgId, e.tokenId, e.method, e.path, e.status, e.requestId, e.time],
      );
      return rows.length > 0;
    },
  };
}
