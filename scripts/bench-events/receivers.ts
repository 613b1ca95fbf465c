import http from "node:http";
import type { Db } from "@platform/kit/db";
import { portBase, run, values } from "./context.js";

export interface Arrival {
  id: string;
  at: number;
}
/**
 * Listens on `port`, or the next free one in the bench's range: the range lies inside Linux's
 * ephemeral ports, so an outgoing connection of any process may hold one for a while.
 */
export async function listenInRange(server: http.Server, port: number): Promise<number> {
  for (let p = port; p < portBase + 1000; p++) {
    const ok = await new Promise<boolean>((resolve) => {
      const onError = () => resolve(false);
      server.once("error", onError);
      server.listen(p, "127.0.0.1", () => {
        server.off("error", onError);
        resolve(true);
      });
    });
    if (ok) return p;
  }
  throw new Error(`no free port from ${port} to ${portBase + 999}`);
}

/** An http server answering 204 to every request, handing each JSON body on with its arrival time. */
export function jsonReceiver(onBody: (body: unknown, at: number) => void): http.Server {
  return http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      res.writeHead(204).end();
      onBody(JSON.parse(Buffer.concat(chunks).toString("utf8")), at);
    });
  });
}

/** Plain http receivers on consecutive ports; each knows the org its events must belong to. */
export async function startReceivers(count: number, firstPort: number, orgOf: (i: number) => string) {
  const arrivals: Arrival[] = [];
  const perReceiver = new Array<number>(count).fill(0);
  let wrongOrg = 0;
  let onArrival: ((a: Arrival) => void) | undefined;
  const servers: http.Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const server = jsonReceiver((json, at) => {
      const body = json as { id: string; data?: { orgId?: string; deal?: { orgId?: string } } };
      if ((body.data?.orgId ?? body.data?.deal?.orgId) !== orgOf(i)) wrongOrg++;
      perReceiver[i] = (perReceiver[i] ?? 0) + 1;
      const a = { id: body.id, at };
      arrivals.push(a);
      onArrival?.(a);
    });
    ports.push(await listenInRange(server, firstPort + i));
    servers.push(server);
  }
  return {
    arrivals,
    perReceiver,
    wrongOrg: () => wrongOrg,
    url: (i: number) => `http://127.0.0.1:${ports[i]}/hook`,
    watch(fn: ((a: Arrival) => void) | undefined) {
      onArrival = fn;
    },
    close: () =>
      Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((r) => {
              s.closeAllConnections();
              s.close(() => r());
            }),
        ),
      ),
  };
}

export const secretOf = (i: number) =>
  `whsec_${Buffer.from(`bench-events-secret-${i}-0123456789ab`).toString("base64")}`;

/** Subscriptions of `orgs[i]` to receivers[i], written as the API would (one per org, v2). */
export async function insertSubscriptions(db: Db, urls: string[], orgOf: (i: number) => string): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, url] of urls.entries()) {
    const id = `whsub_bench${run}${i}`;
    const origin = new URL(url);
    await db.query(
      `INSERT INTO webhooks.org_subscription_counts (org_id, subscriptions) VALUES ($1, 1) ON CONFLICT DO NOTHING`,
      [orgOf(i)],
    );
    await db.query(
      `INSERT INTO webhooks.subscriptions (id, org_id, endpoint_url, events, enabled, payload_version, secret,
         created_at, updated_at, endpoint_origin)
       VALUES ($1, $2, $3, $4, true, 'v2', $5, now(), now(), $6)`,
      [id, orgOf(i), url, ["revenue.deal.created", "revenue.deal.updated"], secretOf(i), `http://${origin.host}`],
    );
    ids.push(id);
  }
  return ids;
}

export const deliveryEnv = (url: string, extra: Record<string, string>) => ({
  DATABASE_URL: url,
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  WEBHOOKS_CONCURRENCY: values.concurrency,
  WEBHOOKS_CONSUMER_GROUP: `bench-events-${run}`,
  ...extra,
});
