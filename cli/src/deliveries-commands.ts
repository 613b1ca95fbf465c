import type { Command } from "commander";
import { ApiError, apiClient } from "./api-client.js";
import { endpoints } from "./endpoints.js";
import { type EventCommandsDeps, fail, requireKey } from "./events-commands.js";
import { table } from "./format.js";

// `platform deliveries …`: what an integrator does when deliveries went wrong, through the
// public API with an API key: list a subscription's attempts, resend one, recover everything
// the endpoint missed since a time, and follow a recovery.

const KEY_HELP =
  "API key (env PLATFORM_API_KEY); needs webhooks:read (list, recovery) or webhooks:write (resend, recover)";

interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: string;
  trigger: string;
  responseStatus: number | null;
  error: string | null;
  createdAt: string;
}

export interface Recovery {
  id: string;
  subscriptionId: string;
  since: string;
  status: "running" | "completed";
  queued: number;
  delivered: number;
  failed: number;
  createdAt: string;
  completedAt: string | null;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: an RFC 3339 date-time, or a duration back from now (`90s`, `30m`, `2h`, `3d`). */
export function parseSince(raw: string, now: Date): string {
  const duration = /^(\d+)([smhd])$/.exec(raw.trim());
  if (duration) return new Date(now.getTime() - Number(duration[1]) * (UNITS[duration[2] ?? "s"] ?? 0)).toISOString();
  if (/^\d{4}-\d{2}-\d{2}T/.test(raw) && !Number.isNaN(Date.parse(raw))) return raw;
  throw new ApiError(
    `--since: '${raw}' is neither a duration (90s, 30m, 2h, 3d) nor a date-time with a zone (2026-03-02T10:00:00Z)`,
  );
}

/** One line of a recovery's progress. */
export function recoveryLine(r: Recovery): string {
  const sent = r.delivered + r.failed;
  return `${r.id} ${r.status}: ${sent}/${r.queued} sent, ${r.delivered} delivered, ${r.failed} failed (since ${r.since})`;
}

const idPath = (prefix: string, raw: string, what: string) => {
  if (!raw.startsWith(prefix)) throw new ApiError(`${what} must be a ${prefix}… id, not '${raw}'`);
  return encodeURIComponent(raw);
};

export function registerDeliveriesCommands(
  program: Command,
  deps: EventCommandsDeps & { sleep?: (ms: number) => Promise<void> },
): void {
  const { apiUrl } = endpoints(deps.env);
  const out = (line: string) => deps.stdout(`${line}\n`);
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const client = (opts: { apiKey?: string; apiUrl: string }) => apiClient(opts.apiUrl, requireKey(deps, opts.apiKey));
  const common = (c: Command) =>
    c
      .option("--api-key <key>", KEY_HELP)
      .option("--api-url <url>", "the API (env PLATFORM_API_URL, else PLATFORM_URL/api/v1alpha1)", apiUrl)
      .option("--json", "print the API's JSON");

  const deliveries = program
    .command("deliveries")
    .description("a webhook subscription's deliveries: list, resend one, recover what the endpoint missed")
    .addHelpText(
      "after",
      `
Examples:
  $ platform deliveries list sub_… --status failed
  $ platform deliveries resend sub_… wd_…
  $ platform deliveries recover sub_… --since 2h --wait
  $ platform deliveries recovery sub_… wrc_…`,
    );

  common(
    deliveries
      .command("list")
      .description("the subscription's delivery attempts, newest first")
      .argument("<subscriptionId>", "sub_… id")
      .option("--status <status>", "only pending, succeeded or failed attempts")
      .option("--limit <n>", "at most this many (1..100)", "25"),
  ).action(
    async (sub: string, opts: { apiKey?: string; apiUrl: string; json?: boolean; status?: string; limit: string }) => {
      try {
        const query = new URLSearchParams({ limit: opts.limit, ...(opts.status ? { status: opts.status } : {}) });
        const page = await client(opts).request<{ items: Delivery[]; nextCursor: string | null }>(
          "GET",
          `/webhook-subscriptions/${idPath("sub_", sub, "subscriptionId")}/deliveries?${query}`,
        );
        if (opts.json) return out(JSON.stringify(page, null, 2));
        if (page.items.length === 0) return out("no deliveries");
        out(
          table(
            ["ID", "EVENT", "TYPE", "#", "STATUS", "TRIGGER", "RESULT", "CREATED"],
            page.items.map((d) => [
              d.id,
              d.eventId,
              d.eventType,
              String(d.attempt),
              d.status,
              d.trigger,
              d.responseStatus !== null ? String(d.responseStatus) : (d.error ?? "-"),
              d.createdAt,
            ]),
          ).trimEnd(),
        );
      } catch (e) {
        fail(deps, e);
      }
    },
  );

  common(
    deliveries
      .command("resend")
      .description("send a delivery's event again now: a new attempt, same webhook-id and body")
      .argument("<subscriptionId>", "sub_… id")
      .argument("<deliveryId>", "wd_… id (from `platform deliveries list`)"),
  ).action(async (sub: string, wd: string, opts: { apiKey?: string; apiUrl: string; json?: boolean }) => {
    try {
      const path = `/webhook-subscriptions/${idPath("sub_", sub, "subscriptionId")}/deliveries/${idPath("wd_", wd, "deliveryId")}/resend`;
      const d = await client(opts).request<Delivery>("POST", path);
      if (opts.json) return out(JSON.stringify(d, null, 2));
      out(`queued ${d.id}: attempt ${d.attempt} of ${d.eventType} ${d.eventId}`);
    } catch (e) {
      fail(deps, e);
    }
  });

  common(
    deliveries
      .command("recover")
      .description(
        "send again every event the endpoint missed since a time (at most 14 days): one attempt each, in event order",
      )
      .argument("<subscriptionId>", "sub_… id")
      .requiredOption("--since <time>", "a duration back from now (30m, 2h, 3d) or a date-time (2026-03-02T10:00:00Z)")
      .option("--wait", "poll the recovery until it completed, printing its progress")
      .option("--interval <seconds>", "seconds between polls with --wait", "2")
      .option("--timeout <seconds>", "give up waiting after this long (exit 1; the recovery goes on)", "600"),
  ).action(
    async (
      sub: string,
      opts: {
        apiKey?: string;
        apiUrl: string;
        json?: boolean;
        since: string;
        wait?: boolean;
        interval: string;
        timeout: string;
      },
    ) => {
      try {
        const since = parseSince(opts.since, deps.now());
        const api = client(opts);
        const base = `/webhook-subscriptions/${idPath("sub_", sub, "subscriptionId")}`;
        let r = await api.request<Recovery>("POST", `${base}/recover`, { since });
        const print = (x: Recovery) => (opts.json ? out(JSON.stringify(x)) : out(recoveryLine(x)));
        print(r);
        if (!opts.wait) return;
        const interval = Math.max(0.1, Number(opts.interval) || 2) * 1000;
        const deadline = Date.now() + Math.max(1, Number(opts.timeout) || 600) * 1000;
        let last = recoveryLine(r);
        while (r.status === "running") {
          if (Date.now() > deadline)
            throw new ApiError(
              `${r.id} still running after ${opts.timeout} s; it goes on (platform deliveries recovery ${sub} ${r.id})`,
            );
          await sleep(interval);
          r = await api.request<Recovery>("GET", `${base}/recoveries/${r.id}`);
          // A line when something changed, so a long recovery shows its progress without repeating itself.
          if (recoveryLine(r) !== last || r.status === "completed") print(r);
          last = recoveryLine(r);
        }
      } catch (e) {
        fail(deps, e);
      }
    },
  );

  common(
    deliveries
      .command("recovery")
      .description("a recovery and its progress")
      .argument("<subscriptionId>", "sub_… id")
      .argument("<recoveryId>", "wrc_… id (printed by `platform deliveries recover`)"),
  ).action(async (sub: string, wrc: string, opts: { apiKey?: string; apiUrl: string; json?: boolean }) => {
    try {
      const r = await client(opts).request<Recovery>(
        "GET",
        `/webhook-subscriptions/${idPath("sub_", sub, "subscriptionId")}/recoveries/${idPath("wrc_", wrc, "recoveryId")}`,
      );
      out(opts.json ? JSON.stringify(r, null, 2) : recoveryLine(r));
    } catch (e) {
      fail(deps, e);
    }
  });
}
