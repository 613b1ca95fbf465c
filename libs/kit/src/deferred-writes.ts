// Deferred writes (`Queryable.defer`): collected during a transaction and sent combined, as few
// statements as their tables allow, just before the next statement or the COMMIT.
import type { Db, Queryable } from "./queryable.js";

interface DeferredWrite {
  sql: string;
  params: unknown[];
  mapError: ((err: unknown) => unknown) | undefined;
}

// A write that can ride in a WITH clause: a plain INSERT, UPDATE or DELETE without quoted text
// (whose `$n` the renumbering below could not tell from a parameter).
const COMBINABLE = /^\s*(?:INSERT|UPDATE|DELETE)\b[^'"]*$/i;

/**
 * Several deferred writes as one statement: all but the last as data-modifying CTEs, their
 * parameters renumbered after those before them. Postgres runs every part of it on one
 * snapshot, which is why deferred writes must not depend on each other or share rows.
 */
export function combineWrites(writes: readonly { sql: string; params: readonly unknown[] }[]): {
  sql: string;
  params: unknown[];
} {
  if (writes.length === 1) return { sql: writes[0]!.sql, params: [...writes[0]!.params] };
  const params: unknown[] = [];
  const parts = writes.map((w) => {
    const offset = params.length;
    params.push(...w.params);
    return w.sql.trim().replace(/\$(\d+)/g, (_m, n: string) => `$${Number(n) + offset}`);
  });
  const last = parts.pop() as string;
  return { sql: `WITH ${parts.map((p, i) => `deferred_${i} AS (${p})`).join(", ")} ${last}`, params };
}

const TARGET_TABLE = /^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([\w.]+)/i;

/**
 * Deferred writes in the order given, cut into runs that can go out as one statement each: a
 * run never holds two writes to one table, because the parts of one statement run in no set
 * order, and the outbox's rows must get their sequence numbers in the order they were written.
 */
function combinable(writes: readonly DeferredWrite[]): DeferredWrite[][] {
  const runs: DeferredWrite[][] = [];
  let run: DeferredWrite[] = [];
  const tables = new Set<string>();
  for (const w of writes) {
    const table = COMBINABLE.test(w.sql) ? TARGET_TABLE.exec(w.sql)?.[1]?.toLowerCase() : undefined;
    if (run.length > 0 && (table === undefined || tables.has(table))) {
      runs.push(run);
      run = [];
      tables.clear();
    }
    run.push(w);
    if (table === undefined) {
      runs.push(run);
      run = [];
      tables.clear();
    } else tables.add(table);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * The Queryable of a transaction, with `defer`: the writes deferred so far go out before any
 * other statement, and `flush()` sends the rest before COMMIT. On this kind of machine a round
 * trip to Postgres costs more CPU on both sides than the statement it carries.
 */
export function deferring(q: Queryable, combined: Queryable = q): Queryable & { flush(): Promise<void> } & CommitHooks {
  let pending: DeferredWrite[] = [];
  const hooks = commitHooks();
  async function flush(): Promise<void> {
    if (pending.length === 0) return;
    const writes = pending;
    pending = [];
    await sendWrites(combined, combinable(writes));
  }
  return {
    query: async <T>(sql: string, params?: unknown[]) => {
      await flush();
      return q.query<T>(sql, params);
    },
    exec: async (sql: string) => {
      await flush();
      await q.exec(sql);
    },
    defer: (sql, params, mapError) => {
      pending.push({ sql, params: params ?? [], mapError });
    },
    ...hooks,
    flush,
  };
}

export interface CommitHooks {
  afterCommit(fn: () => void): void;
  /** Runs what `afterCommit` was given: call once the transaction committed. */
  committed(): void;
}

export function commitHooks(): CommitHooks {
  const hooks: (() => void)[] = [];
  return {
    afterCommit: (fn) => {
      hooks.push(fn);
    },
    committed: () => {
      for (const fn of hooks) fn();
    },
  };
}

/**
 * Deferred writes, a statement per run of `combinable`; a failure is thrown as the first
 * `mapError` of the writes maps it, else as it is.
 */
async function sendWrites(target: Queryable, runs: readonly DeferredWrite[][]): Promise<void> {
  try {
    for (const run of runs) {
      const { sql, params } = combineWrites(run);
      await target.query(sql, params);
    }
  } catch (err) {
    for (const w of runs.flat()) {
      const mapped = w.mapError?.(err);
      if (mapped !== undefined && mapped !== err) throw mapped;
    }
    throw err;
  }
}

/** A Queryable that only collects deferred writes: what `writeOnly` gives its `fn`. */
function collecting(): Queryable & { writes: DeferredWrite[] } & CommitHooks {
  const writes: DeferredWrite[] = [];
  const readsBefore = () => {
    throw new Error("a writeOnly transaction cannot read: read before it, or use tx()");
  };
  return {
    writes,
    query: readsBefore,
    exec: readsBefore,
    defer: (sql, params, mapError) => {
      writes.push({ sql, params: params ?? [], mapError });
    },
    ...commitHooks(),
  };
}

/** `Db.writeOnly` over a driver: `single` sends one statement, `tx` opens a transaction. */
export function writeOnlyOver(single: Queryable, tx: Db["tx"]): Db["writeOnly"] {
  return async (fn) => {
    const q = collecting();
    const result = await fn(q);
    const runs = combinable(q.writes);
    if (runs.length === 1) await sendWrites(single, runs);
    else if (runs.length > 1) await tx((t) => sendWrites(t, runs));
    q.committed();
    return result;
  };
}
