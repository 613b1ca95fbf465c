import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// Issue 56, point 5: the client installs from a clone as its README says, without a registry:
// `npm pack` (which builds dist/ first) and `npm install <the tarball>` in another project,
// offline (the client has no runtime dependencies), then import it from ESM and type-check a
// consumer against its declarations.
const PACKAGE = resolve(import.meta.dirname, "..");
const ROOT = resolve(PACKAGE, "../..");
const work = mkdtempSync(join(tmpdir(), "platform-client-pack-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 240_000 });

describe("the packed client", () => {
  it("installs offline from its tarball into another project, imports and type-checks there", () => {
    const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], PACKAGE)) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0]?.files.map((f) => f.path) ?? [];
    expect(files).toContain("dist/index.js");
    expect(files).toContain("dist/index.d.ts");
    expect(files.some((f) => f.startsWith("src/") || f.startsWith("test/"))).toBe(false);

    const app = join(work, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    const tarball = join(work, readdirSync(work).find((f) => f.endsWith(".tgz")) as string);
    run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], app);

    const out = run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import("@platform/client");
           const c = new m.PlatformClient({ apiKey: "k" });
           console.log(typeof c.deals.list, m.CLIENT_VERSION, typeof m.generateTestWebhookHeaders);`,
      ],
      app,
    );
    const { version } = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as { version: string };
    expect(out.trim()).toBe(`function ${version} function`);

    // A consumer compiles against the shipped declarations (node16 resolution, strict).
    writeFileSync(
      join(app, "index.ts"),
      `import { PlatformClient, lastResponse, type Deal } from "@platform/client";
const client = new PlatformClient({ apiKey: "k" });
export async function name(dealId: string): Promise<string> {
  const deal: Deal = await client.deals.get({ dealId });
  return \`\${deal.name} \${lastResponse(deal)?.requestId}\`;
}
`,
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    run(
      process.execPath,
      [
        tsc,
        "--noEmit",
        "--strict",
        "--module",
        "node16",
        "--moduleResolution",
        "node16",
        "--skipLibCheck",
        "false",
        "index.ts",
      ],
      app,
    );
  }, 300_000);
});
