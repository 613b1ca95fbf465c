import type { Logger } from "./logger.js";

export interface QuietLogOptions {
  /** How often a failure that keeps happening is reported again, with its count. */
  intervalMs?: number;
  /** The time source (tests move it). */
  now?: () => number;
}

/** Reports repeated failures of one kind once per interval instead of once per attempt. */
export interface QuietLog {
  /**
   * A failure of kind `key`: the first is logged at once; repeats within the interval are
   * counted and the next one after it is logged with `repeated` (how many were held back).
   */
  failure(key: string, err: unknown, message: string, level?: "warn" | "error"): void;
  /** The failure of kind `key` stopped: logs the recovery (once) with the number of failures seen. */
  recovered(key: string, message: string): void;
}

/**
 * The error as a log line needs it: a driver's error can carry its whole client (pg's does),
 * which would turn one line into kilobytes.
 */
function brief(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  return { type: err.name, message: err.message, ...(code === undefined ? {} : { code }) };
}

interface Outage {
  since: number;
  lastLogged: number;
  held: number;
  total: number;
}

const DEFAULT_INTERVAL_MS = 60_000;

/**
 * A broker or a database that is down fails every attempt to reach it, several times a
 * second per client; one line per interval with a count says the same without drowning
 * the log (and the log pipeline) for the length of the outage.
 */
export function quietLog(logger: Logger, options: QuietLogOptions = {}): QuietLog {
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const now = options.now ?? Date.now;
  const outages = new Map<string, Outage>();
  return {
    failure(key, err, message, level = "warn") {
      const t = now();
      const outage = outages.get(key);
      if (!outage) {
        outages.set(key, { since: t, lastLogged: t, held: 0, total: 1 });
        logger[level]({ err: brief(err), failure: key }, message);
        return;
      }
      outage.total++;
      if (t - outage.lastLogged < intervalMs) {
        outage.held++;
        return;
      }
      logger[level](
        { err: brief(err), failure: key, repeated: outage.held + 1, failures: outage.total, sinceMs: t - outage.since },
        `${message} (${outage.held + 1} times in the last ${Math.round((t - outage.lastLogged) / 1000)} s)`,
      );
      outage.lastLogged = t;
      outage.held = 0;
    },
    recovered(key, message) {
      const outage = outages.get(key);
      if (!outage) return;
      outages.delete(key);
      logger.info({ failure: key, failures: outage.total, downMs: now() - outage.since }, message);
    },
  };
}
