import { REQUEST_LOG_RETENTION_DAYS, STATUS_CLASSES } from "@platform/contracts/request-logs";
import { problem } from "@platform/kit/problems";

// The rules of the log: what a record is, the window it is kept and read in, and the filters.

export const DAY_MS = 86_400_000;

/** One request's summary, as the gateway published it and the table keeps it. */
export interface RequestLogRecord {
  requestId: string;
  orgId: string;
  createdAt: Date;
  method: string;
  /** Route template, e.g. /deals/{dealId}; "" when no route matched. */
  route: string;
  pathIds: Record<string, string>;
  status: number;
  problemType: string | null;
  durationMs: number;
  keyId: string;
  actingOn: string | null;
  idempotencyKey: string | null;
}

export interface RequestLogFilter {
  status?: number;
  /** [from, to) of the status. */
  statusRange?: [number, number];
  method?: string;
  route?: string;
  problemType?: string;
  keyId?: string;
  /** Inclusive; never before the retention window. */
  from: Date;
  /** Exclusive. */
  to?: Date;
}

/** The first instant still kept at `now`: the log holds the last 7 days. */
export function retentionStart(now: Date): Date {
  return new Date(now.getTime() - REQUEST_LOG_RETENTION_DAYS * DAY_MS);
}

/** The UTC day (midnight) an instant falls on. */
export function dayOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/**
 * Whether a record is worth storing at `now`: one older than the window (a batch redelivered
 * long after) would only be dropped with its partition, and one more than a day ahead (a
 * gateway's clock far off) would need a partition nothing else uses.
 */
export function isStorable(record: RequestLogRecord, now: Date): boolean {
  const at = record.createdAt.getTime();
  return at >= retentionStart(now).getTime() && at < now.getTime() + DAY_MS;
}

/** `2xx` … `5xx` as the range of statuses it names. */
export function statusRange(statusClass: string): [number, number] {
  if (!(STATUS_CLASSES as readonly string[]).includes(statusClass)) {
    throw problem("invalid-filter", `statusClass must be one of ${STATUS_CLASSES.join(", ")}.`, {
      field: "statusClass",
    });
  }
  const hundreds = Number(statusClass[0]) * 100;
  return [hundreds, hundreds + 100];
}

/**
 * The list's filter from the request's: empty strings and 0 are "any" (proto3), a time before
 * the window reads from its start (nothing older is kept), and `to` before `from` is refused.
 */
export function requestLogFilter(
  req: {
    status: number;
    statusClass: string;
    method: string;
    route: string;
    problemType: string;
    keyId: string;
    from?: Date;
    to?: Date;
  },
  now: Date,
): RequestLogFilter {
  if (req.status !== 0 && (req.status < 100 || req.status > 599)) {
    throw problem("invalid-filter", "status must be an HTTP status code (100-599).", { field: "status" });
  }
  const oldest = retentionStart(now);
  const from = req.from && req.from > oldest ? req.from : oldest;
  if (req.to && req.to <= from) {
    throw problem("invalid-filter", "to must be later than from (and than 7 days ago: older logs are not kept).", {
      field: "to",
    });
  }
  return {
    from,
    ...(req.to ? { to: req.to } : {}),
    ...(req.status !== 0 ? { status: req.status } : {}),
    ...(req.statusClass !== "" ? { statusRange: statusRange(req.statusClass) } : {}),
    ...(req.method !== "" ? { method: req.method.toUpperCase() } : {}),
    ...(req.route !== "" ? { route: req.route } : {}),
    ...(req.problemType !== "" ? { problemType: problemName(req.problemType) } : {}),
    ...(req.keyId !== "" ? { keyId: req.keyId } : {}),
  };
}

/** A problem type as its name: the full type URI a problem body carries is accepted too. */
export function problemName(type: string): string {
  const slash = type.lastIndexOf("/");
  return slash === -1 ? type : type.slice(slash + 1);
}
