// Prepared-statement naming for pg: which statements are prepared, and under what name.
/**
 * Put first in a statement that pg must not prepare, so Postgres plans it for its parameters
 * each time. For a statement whose best plan depends on what it is given (an array's length)
 * and on a table that grows: a prepared statement's generic plan, cached while the table was
 * small, keeps its sequential scan until the table is analyzed again, and where autovacuum is
 * off (the development Postgres here) that is never.
 */
export const PLANNED_EACH_TIME = "/* planned each time */ ";

/** At most this many statements of a pool are prepared on each of its connections. */
const PREPARED_PER_POOL = 400;
/** A statement with more parameters than this is a batch whose text varies with its size: not prepared. */
const PREPARED_MAX_PARAMS = 32;

/**
 * Names under which pg prepares a statement once per connection (Parse on first use only):
 * Postgres then skips parsing and analysing it on every later run, and may reuse its plan.
 * On the events bench's write path Postgres then spent 3.4 ms of CPU a write against
 * 4.7–5.5 (docs/benchmarks/gateway.md, "Prepared statements"). Texts that vary with their
 * input (batches) and anything past the cap stay unnamed, so a connection holds a bounded set.
 * Behind PgBouncer in transaction mode this needs its `max_prepared_statements` (1.21+).
 */
export function statementNames(): (sql: string, params: readonly unknown[] | undefined) => string | undefined {
  const names = new Map<string, string>();
  return (sql, params) => {
    const known = names.get(sql);
    if (known !== undefined) return known;
    if (sql.startsWith(PLANNED_EACH_TIME)) return undefined;
    if (names.size >= PREPARED_PER_POOL || (params?.length ?? 0) > PREPARED_MAX_PARAMS) return undefined;
    const name = `kit_${names.size}`;
    names.set(sql, name);
    return name;
  };
}
