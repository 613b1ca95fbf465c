import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";
import { eventually } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";

// Hosts follow identity on the embedded platform: a user invited (and renamed) through the
// API reaches scheduling's hosts projection through identity's events, without the sandbox.
const API = "/api/v1alpha1";
const dataDir = mkdtempSync(join(tmpdir(), "platform-hosts-"));
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));

let platform: EmbeddedPlatform;
let key: string;
let n = 0;

function call(method: "POST" | "PATCH", url: string, body: unknown, headers: Record<string, string> = {}) {
  return platform.app.inject({
    method,
    url: `${API}${url}`,
    headers: {
      "x-platform-api-key": key,
      "content-type": "application/json",
      "idempotency-key": `hosts-${++n}`,
      ...headers,
    },
    payload: JSON.stringify(body),
  });
}

const hostRow = (userId: string) =>
  platform.dbs.scheduling
    .query<Record<string, unknown>>(
      `SELECT org_id, email, first_name, last_name, display_name, time_zone, working_hours
       FROM scheduling.hosts WHERE user_id = $1`,
      [userId],
    )
    .then((rows) => rows[0]);

beforeAll(async () => {
  platform = await createEmbeddedPlatform({
    dataDir,
    clock,
    logger: createLogger("hosts-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, { LOG_LEVEL: "silent" }),
    sandboxSeed: "hosts-test",
    seedSandbox: true,
    // Unused: the admin plane stays closed (no adminPort).
    adminSecret: "hosts-test-admin",
  });
  key = (await platform.sandboxKeys()).find((k) => k.name === "acme-full")?.key ?? "";
  // Seeding every context on a loaded machine can outlast the default hook timeout.
}, 180_000);
afterAll(async () => {
  await platform.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a user invited through the API", () => {
  it("becomes a host in scheduling with the default working hours, and follows a rename", async () => {
    const res = await call("POST", "/users", {
      email: "Quinn.Host@acme.example",
      role: "User",
      firstName: "Quinn",
      lastName: "Host",
    });
    expect(res.statusCode).toBe(201);
    const user = res.json() as { id: string; orgId: string };
    const host = await eventually("the host in scheduling", () => hostRow(user.id));
    expect(host).toEqual({
      org_id: user.orgId,
      email: "quinn.host@acme.example",
      first_name: "Quinn",
      last_name: "Host",
      display_name: "Quinn Host",
      time_zone: "UTC",
      working_hours: [1, 2, 3, 4, 5].map((weekday) => ({ weekday, start: "09:00", end: "17:00" })),
    });

    const renamed = await call("PATCH", `/users/${user.id}`, { firstName: "Quincy" }, { "if-match": 'W/"1"' });
    expect(renamed.statusCode).toBe(200);
    await eventually("the rename in scheduling", async () => {
      const row = await hostRow(user.id);
      return row?.display_name === "Quincy Host" ? row : undefined;
    });
  });
});
