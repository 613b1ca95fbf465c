import { spawn } from "node:child_process";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminSecretInterceptor, type RunningServer, serveConnect } from "@platform/kit/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The real executable, its stdout a pipe whose reader is slow to start: the answer must
// arrive whole however long the reader takes (the process used to exit after 80 KiB).
const SECRET = "cli-pipe-test-admin-secret";
const TOKENS = 4_000;
let server: RunningServer;

beforeAll(async () => {
  const created = timestampFromDate(new Date("2026-01-15T12:00:00Z"));
  const routes = (router: ConnectRouter) =>
    router.service(IdentityAdminService, {
      listTokens: async () => ({
        tokens: Array.from({ length: TOKENS }, (_, i) => ({
          id: `tok_${String(i).padStart(24, "0")}`,
          orgId: "org_pipetest000000000000000",
          name: `token number ${i}`,
          scopes: ["organizations:read", "users:read", "deals:read"],
          keyPreview: "pk_live_abcd",
          createTime: created,
        })),
      }),
    });
  server = await serveConnect({ routes, interceptors: [adminSecretInterceptor(SECRET)], port: 0, host: "127.0.0.1" });
});

afterAll(async () => {
  await server?.close();
});

describe("platform CLI on a pipe", () => {
  it("writes a large --json answer whole before it exits", async () => {
    const child = spawn(process.execPath, ["cli/bin/platform.js", "tokens", "list", "--json"], {
      env: { ...process.env, PLATFORM_ADMIN_URL: `http://127.0.0.1:${server.port}`, PLATFORM_ADMIN_SECRET: SECRET },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    // Nothing is read for a while, so the pipe fills and the CLI's writes queue up.
    child.stdout.pause();
    setTimeout(() => {
      child.stdout.on("data", (d: Buffer) => out.push(d));
      child.stdout.resume();
    }, 1_000);
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(err).toBe("");
    expect(code).toBe(0);
    const text = Buffer.concat(out).toString("utf8");
    expect(text.length).toBeGreaterThan(500_000);
    const tokens = JSON.parse(text) as { id: string }[];
    expect(tokens).toHaveLength(TOKENS);
    expect(tokens.at(-1)?.id).toBe(`tok_${String(TOKENS - 1).padStart(24, "0")}`);
  }, 60_000);
});
