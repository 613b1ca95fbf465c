import { PLANNED_EACH_TIME, type Queryable, type Row } from "@platform/kit/db";
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
   * Appends one org's events at its next positions, in the order given; an event already
   * logged is left as it was and takes no position. Resolves to how many were appended. Call it
   * last in the transaction: the head row stays locked until the commit, which is what makes
   * one org's events commit in position order.
   */
  logEvents(orgId: string, events: Omit<LoggedEvent, "orgId">[]): Promise<number>;
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
    async logEvents(orgId: string, events: Omit<LoggedEvent, "orgId">[]): Promise<number> {
      const [only] = events;
      if (only === undefined) return 0;
      if (events.length === 1) {
        // Prepared, so Postgres neither parses nor plans it again: an event at a time is what a
        // fan-out that keeps up sees. Its look-up of one id by the unique index stays cheap
        // whatever its plan.
        const inserted = await q.query(
          `WITH fresh AS (SELECT WHERE NOT EXISTS (SELECT 1 FROM webhooks.event_log WHERE id = $2)),
           head AS (
             INSERT INTO webhooks.event_log_heads AS h (org_id, position) SELECT $1, 1 FROM fresh
             ON CONFLICT (org_id) DO UPDATE SET position = h.position + 1 RETURNING position)
           INSERT INTO webhooks.event_log (org_id, position, id, type, occurred_at, payload)
           SELECT $1, position, $2, $3, $4::timestamptz, $5 FROM head
           ON CONFLICT (id) DO NOTHING RETURNING id`,
          [orgId, only.id, only.type, only.occurredAt, only.payload],
        );
        return inserted.length;
      }
      // A batch (a fan-out catching up) in one statement: the ids not logged yet move the org's
      // head on by their number and take the positions up to it. Planned each time: a generic
      // plan made while the log was small looks the ids up with a sequential scan, which costs
      // more with every event logged.
      const inserted = await q.query(
        `${PLANNED_EACH_TIME}WITH fresh AS MATERIALIZED (
           SELECT e.*, row_number() OVER (ORDER BY e.ord) AS n
           FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::text[])
             WITH ORDINALITY AS e(id, type, occurred_at, payload, ord)
           WHERE NOT EXISTS (SELECT 1 FROM webhooks.event_log l WHERE l.id = e.id)),
         head AS (
           INSERT INTO webhooks.event_log_heads AS h (org_id, position)
           SELECT $1, count(*) FROM fresh HAVING count(*) > 0
           ON CONFLICT (org_id) DO UPDATE SET position = h.position + excluded.position RETURNING position)
         INSERT INTO webhooks.event_log (org_id, position, id, type, occurred_at, payload)
         SELECT $1, head.position - (SELECT count(*) FROM fresh) + fresh.n, fresh.id, fresh.type,
           fresh.occurred_at, fresh.payload
         FROM fresh, head
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          orgId,
          events.map((e) => e.id),
          events.map((e) => e.type),
          events.map((e) => e.occurredAt),
          events.map((e) => e.payload),
        ],
      );
      return inserted.length;
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
