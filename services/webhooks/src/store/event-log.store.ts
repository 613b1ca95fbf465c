import type { Queryable, Row } from "@platform/kit/db";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";

/** The sort of GET /events: when the event happened, newest first. */
export const EVENT_SORT_KEYS: Record<string, SortKey> = {
  createdAt: { expr: "l.occurred_at", type: "timestamptz", nullable: false },
};

/** One event of the log. */
export interface LoggedEvent {
  id: string;
  orgId: string;
  type: string;
  occurredAt: Date;
  /** The v2 envelope as JSON text, exactly the body of the event's v2 deliveries. */
  payload: string;
}

/** A logged event with its position in its org's log. */
export interface PositionedEvent extends LoggedEvent {
  position: number;
}

function toEvent(r: Row): PositionedEvent {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    type: String(r.type),
    occurredAt: new Date(r.occurred_at as string | Date),
    payload: String(r.payload),
    position: Number(r.position),
  };
}

/** Each org's log of the events it may receive (30 days), in the order they were logged. */
export interface EventLogStore {
  /**
   * Appends an event at its org's next position; an event already logged is left as it was.
   * Call it last in the transaction: the head row stays locked until the commit, which is what
   * makes one org's events commit in position order.
   */
  logEvent(e: LoggedEvent): Promise<boolean>;
  findLoggedEvent(orgId: string, id: string): Promise<PositionedEvent | undefined>;
  /** One keyset page of GET /events. */
  listLoggedEvents(
    orgId: string,
    filter: { types: string[]; createdAfter?: Date; createdBefore?: Date },
    page: PageQuery,
  ): Promise<Keyed<PositionedEvent>[]>;
  /** The org's last position; 0 before its first event. */
  logHead(orgId: string): Promise<number>;
  /**
   * Events after `after` up to `upTo` (a head read before this query, so every event up to it
   * has committed), oldest first.
   */
  loggedEventsAfter(
    orgId: string,
    after: number,
    upTo: number,
    types: string[],
    limit: number,
  ): Promise<PositionedEvent[]>;
  /** Deletes events that happened before `before`, at most `limit` of them; resolves to how many. */
  purgeLoggedEvents(before: Date, limit: number): Promise<number>;
}

export function eventLogStore(q: Queryable): EventLogStore {
  return {
    async logEvent(e: LoggedEvent): Promise<boolean> {
      // One statement (a fan-out's round trips are most of its cost): an id already logged
      // takes no position; otherwise the org's head moves on and the event takes its position.
      const inserted = await q.query(
        `WITH fresh AS (SELECT WHERE NOT EXISTS (SELECT 1 FROM webhooks.event_log WHERE id = $2)),
         head AS (
           INSERT INTO webhooks.event_log_heads AS h (org_id, position) SELECT $1, 1 FROM fresh
           ON CONFLICT (org_id) DO UPDATE SET position = h.position + 1 RETURNING position)
         INSERT INTO webhooks.event_log (org_id, position, id, type, occurred_at, payload)
         SELECT $1, position, $2, $3, $4::timestamptz, $5 FROM head
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [e.orgId, e.id, e.type, e.occurredAt, e.payload],
      );
      return inserted.length > 0;
    },

    async findLoggedEvent(orgId: string, id: string): Promise<PositionedEvent | undefined> {
      const [row] = await q.query("SELECT * FROM webhooks.event_log WHERE org_id = $1 AND id = $2", [orgId, id]);
      return row && toEvent(row);
    },

    async listLoggedEvents(
      orgId: string,
      filter: { types: string[]; createdAfter?: Date; createdBefore?: Date },
      page: PageQuery,
    ): Promise<Keyed<PositionedEvent>[]> {
      const p = params();
      const where = [`l.org_id = ${p.add(orgId)}`];
      if (filter.types.length > 0) where.push(`l.type = ANY(${p.add(filter.types)}::text[])`);
      if (filter.createdAfter) where.push(`l.occurred_at >= ${p.add(filter.createdAfter)}`);
      if (filter.createdBefore) where.push(`l.occurred_at < ${p.add(filter.createdBefore)}`);
      // Ties in time (events of one transaction, or of one millisecond) go by the order they
      // were recorded in: the org's log position, unique within the org like an id.
      const source = { columns: "l.*", from: "webhooks.event_log l", where, idExpr: "l.position" };
      return keysetRows(q, source, page, p, toEvent);
    },

    async logHead(orgId: string): Promise<number> {
      const [row] = await q.query("SELECT position FROM webhooks.event_log_heads WHERE org_id = $1", [orgId]);
      return row ? Number(row.position) : 0;
    },

    async loggedEventsAfter(
      orgId: string,
      after: number,
      upTo: number,
      types: string[],
      limit: number,
    ): Promise<PositionedEvent[]> {
      const p = params();
      const where = [
        `org_id = ${p.add(orgId)}`,
        `position > ${p.add(after)}`,
        `position <= ${p.add(upTo)}`,
        ...(types.length > 0 ? [`type = ANY(${p.add(types)}::text[])`] : []),
      ];
      const rows = await q.query(
        `SELECT * FROM webhooks.event_log WHERE ${where.join(" AND ")} ORDER BY position LIMIT ${p.add(limit)}`,
        p.values,
      );
      return rows.map(toEvent);
    },

    async purgeLoggedEvents(before: Date, limit: number): Promise<number> {
      const rows = await q.query(
        `DELETE FROM webhooks.event_log WHERE id IN (
           SELECT id FROM webhooks.event_log WHERE occurred_at < $1 LIMIT $2) RETURNING id`,
        [before, limit],
      );
      return rows.length;
    },
  };
}
