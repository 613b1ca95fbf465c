import { IdentityAdminService } from "@platform/contracts/identity";
import { newId } from "@platform/kit/ids";
import { eventually } from "@platform/kit/testing";
import { describe, expect, it } from "vitest";
import {
  bookAndCancel,
  CANCELED,
  call,
  keys,
  MAX_STREAMS,
  openStream,
  platform,
  problemType,
  t,
  useEventsPlatform,
} from "./setup.js";

// GET /events/stream: live events as SSE.

useEventsPlatform();

describe("GET /events/stream", { timeout: 90_000 }, () => {
  it("streams new events as SSE with heartbeats, and resumes after Last-Event-ID without gaps or repeats", async () => {
    const reader = keys["acme-readonly"]!;
    const stream = await openStream(reader);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.headers.get("x-request-id")).toBeTruthy();
    expect(stream.headers.get("ratelimit")).toMatch(/^"read";/);
    const first = await bookAndCancel();
    await eventually(
      `${stream.messages.length} messages so far`,
      () => (stream.messages.length < 2 ? undefined : true),
      10_000,
    );
    expect(stream.messages.map((m) => m.id)).toEqual([first.booked, first.canceled]);
    // The data is the v2 envelope, exactly as GET /events/{id} shows it.
    const logged = await call("GET", `/events/${first.booked}`);
    expect(stream.messages[0]!.data).toBe(logged.body);
    await eventually(
      "no heartbeat yet",
      () => (!stream.comments.some((c) => c.trim().startsWith("heartbeat")) ? undefined : true),
      10_000,
    );
    stream.close();

    // Missed while disconnected: two more events; a reconnect after the last one seen gets exactly them.
    const missed = await bookAndCancel();
    const resumed = await openStream(reader, { "last-event-id": first.canceled });
    await eventually(
      `${resumed.messages.length} messages so far`,
      () => (resumed.messages.length < 2 ? undefined : true),
      10_000,
    );
    const third = await bookAndCancel();
    await eventually(
      `${resumed.messages.length} messages so far`,
      () => (resumed.messages.length < 4 ? undefined : true),
      10_000,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(resumed.messages.map((m) => m.id)).toEqual([missed.booked, missed.canceled, third.booked, third.canceled]);
    resumed.close();

    // Filtered like the log; an unknown Last-Event-ID is an ordinary 400 problem, not a stream.
    const filtered = await openStream(reader, { "last-event-id": first.canceled }, `?type=${CANCELED}`);
    await eventually(
      `${filtered.messages.length} messages so far`,
      () => (filtered.messages.length < 2 ? undefined : true),
      10_000,
    );
    expect(filtered.messages.map((m) => m.id)).toEqual([missed.canceled, third.canceled]);
    filtered.close();
    const unknown = await openStream(reader, { "last-event-id": newId("evt_") });
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.body).type).toBe(problemType("invalid-cursor"));
    const badType = await openStream(reader, {}, "?type=nope");
    expect(badType.status).toBe(400);
    expect(JSON.parse(badType.body).type).toBe(problemType("invalid-filter"));
  });

  it("counts once per connection against the read limit, and caps the streams a token holds open", async () => {
    const reader = keys["acme-readonly"]!;
    const remaining = async () =>
      Number(/r=(\d+)/.exec(String((await call("GET", "/events?limit=1", { apiKey: reader })).headers.ratelimit))?.[1]);
    const before = await remaining();
    const streams = [await openStream(reader), await openStream(reader)];
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    await bookAndCancel();
    await eventually("not streamed yet", () => (streams.some((s) => s.messages.length < 2) ? undefined : true), 10_000);
    // Two streams and two events each: two hits, plus this request's own.
    expect(await remaining()).toBe(before - 3);

    const refused = await openStream(reader);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body)).toMatchObject({ type: problemType("rate-limit-exceeded"), limit: MAX_STREAMS });
    // Another token has its own streams.
    const other = await openStream(keys["acme-full"]!);
    expect(other.status).toBe(200);
    other.close();
    // Closing one frees its place.
    streams[0]!.close();
    const again = await eventually(
      "a place freed by the closed stream",
      async () => {
        const s = await openStream(reader);
        return s.status === 200 ? s : undefined;
      },
      10_000,
      100,
    );
    again.close();
    streams[1]!.close();
  });

  it("ends a revoked key's open streams within a second, with a last comment, and sends no later event", async () => {
    const admin = t.adminClient(IdentityAdminService);
    const orgId = (await call("GET", "/organizations/me", { as: "acme-readonly" })).json().id as string;
    const { key, token } = await admin.createToken({ orgId, name: "stream-revoke", scopes: ["webhooks:read"] });
    const streams = [await openStream(key), await openStream(key)];
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    const other = await openStream(keys["acme-readonly"]!);
    const before = await bookAndCancel();
    await eventually(
      "the events before the revocation",
      () => (streams.every((s) => s.messages.length >= 2) ? true : undefined),
      10_000,
    );

    await admin.revokeToken({ tokenId: token?.id ?? "" });
    const revokedAt = Date.now();
    // Created once the revocation event has reached the gateway (the relay and the bus are
    // asynchronous): no stream of the revoked key may carry them.
    await platform.drainOutbox();
    await platform.bus.idle();
    const after = await bookAndCancel();
    for (const s of streams) {
      const endedAt = await s.ended;
      expect(endedAt - revokedAt).toBeLessThan(1_000);
      expect(s.comments.at(-1)?.trim()).toBe("access revoked; the stream ends");
      expect(s.messages.map((m) => m.id)).toEqual([before.booked, before.canceled]);
    }
    // Another key's stream goes on, and gets the later events.
    await eventually(
      "the other stream to get the later events",
      () => (other.messages.some((m) => m.id === after.canceled) ? true : undefined),
      10_000,
    );
    const reopened = await openStream(key);
    expect(reopened.status).toBe(401);
    expect(JSON.parse(reopened.body).type).toBe(problemType("unknown-subscription"));
  });
});
