import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";
import { sandboxLegacySecret } from "@platform/webhooks/server";
import { afterAll, describe, expect, it } from "vitest";
import { createEmbeddedPlatform } from "../src/platform.js";

// No webhook signing secret may reach the disk in clear, not even for a moment: a value
// overwritten at once still survives in PGlite's write-ahead log and in old page versions.
const dataDir = mkdtempSync(join(tmpdir(), "platform-secrets-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function* filesUnder(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else if (entry.isFile()) yield path;
  }
}

describe("secrets at rest in the embedded data directory", () => {
  it("holds no whsec_ secret in any file after the sandbox is seeded", async () => {
    const platform = await createEmbeddedPlatform({
      dataDir,
      clock: new ManualClock(new Date("2026-03-02T10:00:00Z")),
      logger: createLogger("secrets-test", "silent"),
      gateway: loadConfig(gatewayConfigSpec, { LOG_LEVEL: "silent" }),
      sandboxSeed: "secrets-test",
      seedSandbox: true,
      adminSecret: "secrets-test-admin-secret",
    });
    expect(platform.seeded).toBe(true);
    // The seeded subscription exists and its stored secret is the sealed form.
    const [row] = await platform.dbs.webhooks!.query<{ secret: string }>(
      "SELECT secret FROM webhooks.subscriptions WHERE payload_version = 'legacy'",
    );
    expect(row?.secret).toMatch(/^enc:v1:/);
    // Closing checkpoints, so everything written is in the files scanned below.
    await platform.close();

    const files = [...filesUnder(dataDir)];
    expect(files.length).toBeGreaterThan(100);
    const secret = Buffer.from(sandboxLegacySecret("secrets-test"));
    const prefix = Buffer.from("whsec_");
    const found = files.filter((f) => {
      const bytes = readFileSync(f);
      return bytes.includes(prefix) || bytes.includes(secret.subarray(6));
    });
    expect(found).toEqual([]);
  });
});
