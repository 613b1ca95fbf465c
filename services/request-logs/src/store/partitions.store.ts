import type { Queryable } from "@platform/kit/db";
import { partitionName } from "../domain/partitions.js";
import { DAY_MS } from "../domain/request-log.js";

export interface PartitionStore {
  /** Creates the partition of the UTC day `day` unless it exists. */
  ensurePartition(day: Date): Promise<void>;
  /** The names of the table's partitions. */
  listPartitions(): Promise<string[]>;
  /** Drops one partition (a whole day's rows at once). */
  dropPartition(name: string): Promise<void>;
}

export function partitionStore(q: Queryable): PartitionStore {
  return {
    async ensurePartition(day) {
      const name = partitionName(day);
      const from = day.toISOString();
      const to = new Date(day.getTime() + DAY_MS).toISOString();
      // Names and bounds come from a Date, never from input, so they can be spliced in (DDL takes no parameters).
      await q.exec(
        `CREATE TABLE IF NOT EXISTS request_logs.${name} PARTITION OF request_logs.request_logs
           FOR VALUES FROM ('${from}') TO ('${to}')`,
      );
    },

    async listPartitions() {
      const rows = await q.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_inherits i
           JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'request_logs.request_logs'::regclass ORDER BY c.relname`,
      );
      return rows.map((r) => r.name);
    },

    async dropPartition(name) {
      if (!/^request_logs_\d{8}$/.test(name)) throw new Error(`not a request log partition: ${name}`);
      await q.exec(`DROP TABLE IF EXISTS request_logs.${name}`);
    },
  };
}
