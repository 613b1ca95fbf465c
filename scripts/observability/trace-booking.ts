// One traced booking, as an integrator would make it: a webhook subscription to a receiver,
// an availability search, then POST /scheduled-meetings with the integrator's own W3C
// traceparent (sampled). Used by the observability infra test and the Zipkin screenshot
// (scripts/observability/screenshot.ts); run alone it books against a running stack:
//   node --import tsx scripts/observability/trace-booking.ts [--gateway URL] [--seed SEED]
// (the stack's webhooks process needs WEBHOOKS_ALLOW_PRIVATE_TARGETS=true for the local receiver).
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sandboxKeysOffline, sandboxScheduleId } from "@platform/sandbox";

export interface Delivery {
  traceparent: string | undefined;
  body: { type: string; data: { meeting?: { id: string } } };
}

/** A webhook receiver on 127.0.0.1 that records each delivery and its traceparent. */
export async function startReceiver(port = 0): Promise<{ url: string; received: Delivery[]; close(): Promise<void> }> {
  const received: Delivery[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      try {
        received.push({ traceparent: req.headers.traceparent as string | undefined, body: JSON.parse(body) });
      } catch {
        // Not a delivery: ignored.
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/hooks`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface TracedBooking {
  /** The receiver's subscription (removeSubscription deletes it once its delivery arrived). */
  subscriptionId: string;
  traceId: string;
  /** The integrator's span: the parent of the gateway's server span. */
  parentSpanId: string;
  meetingId: string;
}

/** Subscribes `receiverUrl` to bookings, then books one meeting under a fresh sampled trace. */
export async function bookTraced(opts: {
  gateway: string;
  seed: string;
  receiverUrl: string;
  run?: string;
}): Promise<TracedBooking> {
  const run = opts.run ?? randomBytes(4).toString("hex");
  const key = sandboxKeysOffline(opts.seed).find((k) => k.name === "acme-full")?.key ?? "";
  const api = `${opts.gateway}/api/v1alpha1`;
  const headers = { "content-type": "application/json", "x-platform-api-key": key };
  const call = async (path: string, init: RequestInit, expected: number) => {
    const res = await fetch(`${api}${path}`, init);
    const text = await res.text();
    if (res.status !== expected) throw new Error(`${init.method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as unknown;
  };
  const subscription = (await call(
    "/webhook-subscriptions",
    {
      method: "POST",
      headers: { ...headers, "idempotency-key": `sub-${run}` },
      body: JSON.stringify({ endpointUrl: opts.receiverUrl, events: ["scheduling.smartscheduler.booked"] }),
    },
    201,
  )) as { id: string };
  const formValues = { region: "AMER" };
  const groups = (await call(
    `/smart-schedules/${sandboxScheduleId(opts.seed, "acme-intro")}/availability`,
    { method: "POST", headers, body: JSON.stringify({ formValues }) },
    200,
  )) as { hostGroups: { slots: { slotToken: string }[] }[][] };
  const slotToken = groups.hostGroups.flat().find((h) => h.slots.length > 0)?.slots[0]?.slotToken;
  if (!slotToken) throw new Error("no free slot to book");
  const traceId = randomBytes(16).toString("hex");
  const parentSpanId = randomBytes(8).toString("hex");
  const booked = (await call(
    "/scheduled-meetings",
    {
      method: "POST",
      headers: { ...headers, "idempotency-key": `book-${run}`, traceparent: `00-${traceId}-${parentSpanId}-01` },
      body: JSON.stringify({
        slotToken,
        attendee: { email: "trace.me@example.com", firstName: "Trace", lastName: "Me" },
        formValues,
        surveyResponses: { "What would you like to discuss?": "Tracing" },
      }),
    },
    201,
  )) as { id: string };
  return { subscriptionId: subscription.id, traceId, parentSpanId, meetingId: booked.id };
}

/** Deletes a subscription bookTraced made, so a later run's trace has no delivery to a receiver that is gone. */
export async function removeSubscription(opts: {
  gateway: string;
  seed: string;
  subscriptionId: string;
}): Promise<void> {
  const key = sandboxKeysOffline(opts.seed).find((k) => k.name === "acme-full")?.key ?? "";
  await fetch(`${opts.gateway}/api/v1alpha1/webhook-subscriptions/${opts.subscriptionId}`, {
    method: "DELETE",
    headers: { "x-platform-api-key": key },
  });
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] ? (process.argv[i + 1] as string) : fallback;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const gateway = arg("--gateway", `http://127.0.0.1:${process.env.GATEWAY_PORT ?? 8080}`);
  const seed = arg("--seed", process.env.SANDBOX_SEED ?? "sandbox");
  const receiver = await startReceiver();
  try {
    const booking = await bookTraced({ gateway, seed, receiverUrl: receiver.url });
    const deadline = Date.now() + 30_000;
    while (!receiver.received.some((d) => d.body.data.meeting?.id === booking.meetingId) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    const hit = receiver.received.find((d) => d.body.data.meeting?.id === booking.meetingId);
    await removeSubscription({ gateway, seed, subscriptionId: booking.subscriptionId });
    console.log(JSON.stringify({ ...booking, deliveredWith: hit?.traceparent ?? null }));
  } finally {
    await receiver.close();
  }
}
