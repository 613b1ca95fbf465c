import { type Command, CommanderError } from "commander";
import { ApiError, apiClient } from "./api-client.js";
import { endpoints } from "./endpoints.js";
import { table } from "./format.js";

// `platform requests list|get`: the org's own request log (GET /request-logs), with an API key
// that holds logs:read, as an integrator looks up the requestId a failed call quoted.

export interface RequestCommandsDeps {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  now(): Date;
}

/** A request log record as the API answers it. */
interface RequestLog {
  requestId: string;
  method: string;
  route: string;
  pathIds: Record<string, string>;
  status: number;
  problemType: string | null;
  durationMs: number;
  keyId: string;
  orgId: string;
  actingOn: string | null;
  idempotencyKey: string | null;
  createdAt: string;
}

const KEY_HELP = "API key (env PLATFORM_API_KEY); needs logs:read";
const API_URL_HELP = "the API (env PLATFORM_API_URL, else PLATFORM_URL/api/v1alpha1)";
const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const STATUS_CLASS = /^[2-5]xx$/;

function fail(deps: RequestCommandsDeps, err: unknown): never {
  if (!(err instanceof ApiError)) throw err;
  deps.stderr(`error: ${err.message}\n`);
  throw new CommanderError(1, "platform.api", err.message);
}

function requireKey(deps: RequestCommandsDeps, raw: string | undefined): string {
  const key = raw ?? deps.env.PLATFORM_API_KEY;
  if (!key) {
    fail(
      deps,
      new ApiError("an API key is required: pass --api-key or set PLATFORM_API_KEY (see `platform sandbox keys`)"),
    );
  }
  return key;
}

/** `--since`: a duration back from now (`30m`, `2h`, `1d`) or an ISO 8601 time, as the API's `from`. */
export function sinceParameter(raw: string, now: Date): string {
  const duration = /^(\d+)([smhd])$/.exec(raw.trim());
  if (duration) return new Date(now.getTime() - Number(duration[1]) * UNITS[duration[2]!]!).toISOString();
  if (/^\d{4}-\d{2}-\d{2}/.test(raw) && !Number.isNaN(Date.parse(raw))) return raw;
  throw new ApiError(`--since must be a duration such as 30m, 2h or 1d, or an ISO 8601 time; not '${raw}'`);
}

/** The query of `requests list` from its options, checked before anything is sent. */
export function listQuery(
  opts: {
    status?: string;
    statusClass?: string;
    method?: string;
    route?: string;
    problemType?: string;
    keyId?: string;
    since?: string;
    limit?: string;
    cursor?: string;
  },
  now: Date,
): URLSearchParams {
  const q = new URLSearchParams();
  if (opts.status !== undefined) {
    if (!/^[1-5]\d\d$/.test(opts.status))
      throw new ApiError(`--status must be an HTTP status such as 404, not '${opts.status}'`);
    q.set("status", opts.status);
  }
  if (opts.statusClass !== undefined) {
    const value = opts.statusClass.toLowerCase();
    if (!STATUS_CLASS.test(value))
      throw new ApiError(`--status-class must be 2xx, 3xx, 4xx or 5xx, not '${opts.statusClass}'`);
    q.set("statusClass", value);
  }
  if (opts.method !== undefined) q.set("method", opts.method.toUpperCase());
  if (opts.route !== undefined) q.set("route", opts.route);
  if (opts.problemType !== undefined) q.set("problemType", opts.problemType);
  if (opts.keyId !== undefined) q.set("keyId", opts.keyId);
  if (opts.since !== undefined) q.set("from", sinceParameter(opts.since, now));
  if (opts.limit !== undefined) {
    if (!/^\d+$/.test(opts.limit) || Number(opts.limit) < 1 || Number(opts.limit) > 100) {
      throw new ApiError(`--limit must be a number from 1 to 100, not '${opts.limit}'`);
    }
    q.set("limit", opts.limit);
  }
  if (opts.cursor !== undefined) q.set("cursor", opts.cursor);
  return q;
}

const row = (r: RequestLog) => [
  r.createdAt,
  String(r.status),
  r.method,
  r.route,
  `${r.durationMs.toFixed(1)} ms`,
  r.problemType ?? "",
  r.requestId,
];

function describe(r: RequestLog): string {
  const ids = Object.entries(r.pathIds).map(([k, v]) => `${k}=${v}`);
  return [
    `requestId       ${r.requestId}`,
    `time            ${r.createdAt}`,
    `request         ${r.method} ${r.route}${ids.length ? `  (${ids.join(", ")})` : ""}`,
    `status          ${r.status}${r.problemType ? ` ${r.problemType}` : ""}`,
    `duration        ${r.durationMs} ms`,
    `key             ${r.keyId} (org ${r.orgId})`,
    `acting on       ${r.actingOn ?? "-"}`,
    `idempotency key ${r.idempotencyKey ?? "-"}`,
  ].join("\n");
}

/** `platform requests list` and `platform requests get`. */
export function registerRequestCommands(program: Command, deps: RequestCommandsDeps): void {
  const { apiUrl } = endpoints(deps.env);
  const out = (line: string) => deps.stdout(`${line}\n`);
  const requests = program
    .command("requests")
    .description("the organization's own API requests of the last 7 days (GET /request-logs; scope logs:read)");

  requests
    .command("list")
    .description("list the org's requests, newest first")
    .option("--status <code>", "only this status, e.g. 404")
    .option("--status-class <class>", "only 2xx, 3xx, 4xx or 5xx")
    .option("--method <method>", "only this method, e.g. POST")
    .option("--route <template>", "only this route template, e.g. /deals/{dealId}")
    .option("--problem-type <name>", "only this problem, e.g. rate-limit-exceeded")
    .option("--key-id <tokenId>", "only requests made with this API key (tok_…)")
    .option("--since <when>", "only requests since a duration ago (30m, 2h, 1d) or an ISO 8601 time")
    .option("--limit <n>", "records per page, 1 to 100 (default 25)")
    .option("--cursor <cursor>", "the next page: the cursor the previous page printed")
    .option("--api-key <key>", KEY_HELP)
    .option("--api-url <url>", API_URL_HELP, apiUrl)
    .option("--json", "print the page as JSON {items, nextCursor}")
    .addHelpText(
      "after",
      `
Examples:
  $ platform requests list --status-class 5xx --since 1h
  $ platform requests list --route '/deals/{dealId}' --method PATCH --json
  $ platform requests list --problem-type rate-limit-exceeded --key-id tok_…`,
    )
    .action(async (opts: Record<string, string | boolean | undefined> & { apiUrl: string; apiKey?: string }) => {
      const apiKey = requireKey(deps, opts.apiKey);
      try {
        const query = listQuery(opts as Parameters<typeof listQuery>[0], deps.now());
        const page = await apiClient(opts.apiUrl, apiKey).request<{ items: RequestLog[]; nextCursor: string | null }>(
          "GET",
          `/request-logs${query.size > 0 ? `?${query}` : ""}`,
        );
        if (opts.json) {
          out(JSON.stringify(page, null, 2));
          return;
        }
        out(table(["time", "status", "method", "route", "duration", "problem", "requestId"], page.items.map(row)));
        if (page.nextCursor) out(`\nmore: add --cursor ${page.nextCursor}`);
      } catch (e) {
        fail(deps, e);
      }
    });

  requests
    .command("get")
    .description(
      "one request of the org by its requestId (as a response's X-Request-Id or a problem's requestId gave it)",
    )
    .argument("<requestId>", "the request's id, e.g. req_…")
    .option("--api-key <key>", KEY_HELP)
    .option("--api-url <url>", API_URL_HELP, apiUrl)
    .option("--json", "print the record as JSON")
    .addHelpText(
      "after",
      `
Another org's requestId answers like an unknown one (404 request-log-not-found); records are kept 7 days.

Examples:
  $ platform requests get req_3k2j…
  $ platform requests get my-trace-id-42 --json`,
    )
    .action(async (requestId: string, opts: { apiKey?: string; apiUrl: string; json?: boolean }) => {
      const apiKey = requireKey(deps, opts.apiKey);
      try {
        const record = await apiClient(opts.apiUrl, apiKey).request<RequestLog>(
          "GET",
          `/request-logs/${encodeURIComponent(requestId)}`,
        );
        out(opts.json ? JSON.stringify(record, null, 2) : describe(record));
      } catch (e) {
        fail(deps, e);
      }
    });
}
