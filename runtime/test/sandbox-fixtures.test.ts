import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";
import { type SandboxFixture, sandboxFixtures } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";

// `platform sandbox fixtures` promises, per scenario, a request that shows it: every row is
// called here through the gateway on a freshly seeded embedded platform.
const API = "/api/v1alpha1";
const SEED = "fixtures-test";
const DOCS = "https://docs.fixtures-test.example";
const dataDir = mkdtempSync(join(tmpdir(), "platform-fixtures-"));
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));
const fixtures = sandboxFixtures(SEED);

let platform: EmbeddedPlatform;
let keys: Map<string, string>;

type Body = Record<string, unknown> & { items?: { id: string }[] };
const problem = (name: string) => ({ type: `${DOCS}/platform-api/errors/${name}` });

/** What each scenario's request answers, by scenario name. */
const EXPECTED: Record<string, (status: number, body: Body, f: SandboxFixture) => void> = {
  organization: (s, b, f) => expect([s, b.id]).toEqual([200, f.id]),
  "partner-parent": (s, b, f) => {
    expect(s).toBe(200);
    const ids = (b.items ?? []).map((o) => o.id);
    const child = (scenario: string) => fixtures.find((x) => x.scenario === scenario)?.id;
    expect(ids).toEqual(expect.arrayContaining([child("managed-child"), child("child-with-issues")]));
    expect(ids).not.toContain(f.id);
  },
  "managed-child": (s, b, f) => expect([s, b.id]).toEqual([200, f.id]),
  "child-with-issues": (s, b, f) => expect([s, (b.items ?? []).map((o) => o.id)]).toEqual([200, [f.id]]),
  "revoked-child": (s) => expect(s).toBe(403),
  "pending-invitation": (s, b) => expect([s, b.invitationStatus]).toEqual([200, "pending"]),
  "expired-invitation": (s, b) => expect([s, b.invitationStatus]).toEqual([200, "expired"]),
  "deactivated-user": (s, b) => expect([s, b.active]).toEqual([200, false]),
  "routed-schedule": (s, b) => expect([s, b.status]).toEqual([200, "active"]),
  "disabled-schedule": (s, b) => expect([s, b.status]).toEqual([200, "disabled"]),
  "draft-schedule": (s, b) => expect([s, b]).toEqual([404, expect.objectContaining(problem("schedule-not-found"))]),
  "meeting-with-transcript": (s, b) => {
    expect(s).toBe(200);
    expect(b).toMatchObject({ meetingId: expect.any(String) });
  },
  "meeting-with-chat": (s, b) => expect([s, (b.items ?? []).length > 0]).toEqual([200, true]),
  "expired-transcript": (s, b) => expect([s, b]).toEqual([410, expect.objectContaining(problem("transcript-expired"))]),
  "failed-bot": (s, b) => expect([s, b.status, typeof b.errorReason]).toEqual([200, "failed", "string"]),
  "canceled-meeting": (s, b) => expect([s, b.status]).toEqual([200, "canceled"]),
  "upcoming-meeting": (s, b) => expect([s, b.status]).toEqual([200, "scheduled"]),
  "preview-meeting": (s, b) =>
    expect([s, (b.smartScheduling as { preview?: boolean } | null)?.preview]).toEqual([200, true]),
  "open-deal": (s, b) => expect([s, ["Won", "Lost"].includes(String(b.stage))]).toEqual([200, false]),
  "won-deal": (s, b) => expect([s, b.stage]).toEqual([200, "Won"]),
  "lost-deal": (s, b) => expect([s, b.stage]).toEqual([200, "Lost"]),
  "sending-blast": (s, b) => expect([s, (b.summary as { status?: string })?.status]).toEqual([200, "Sending"]),
  "draft-blast": (s, b) => expect([s, (b.summary as { status?: string })?.status]).toEqual([200, "Draft"]),
  "legacy-webhook": (s, b) => expect([s, b.payloadVersion, b.enabled]).toEqual([200, "legacy", false]),
};

beforeAll(async () => {
  platform = await createEmbeddedPlatform({
    dataDir,
    clock,
    logger: createLogger("fixtures-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS, LOG_LEVEL: "silent" }),
    sandboxSeed: SEED,
    seedSandbox: true,
    // Unused: the admin plane stays closed (no adminPort).
    adminSecret: "fixtures-test-admin",
  });
  keys = new Map((await platform.sandboxKeys()).map((k) => [k.name, k.key]));
  // Seeding every context on a loaded machine can outlast the default hook timeout.
}, 180_000);
afterAll(async () => {
  await platform.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the sandbox fixtures", () => {
  it("has an expectation for every scenario", () => {
    expect(fixtures.map((f) => f.scenario).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(fixtures.map((f) => [f.scenario, f] as const))("%s: its request shows it", async (_, f) => {
    const key = keys.get(f.key);
    expect(key, `sandbox key ${f.key}`).toBeDefined();
    const res = await platform.app.inject({
      method: "GET",
      url: `${API}${f.path}`,
      headers: { "x-platform-api-key": key ?? "", ...(f.actingOn ? { "x-platform-acting-on": f.actingOn } : {}) },
    });
    EXPECTED[f.scenario]?.(res.statusCode, res.json() as Body, f);
  });
});
