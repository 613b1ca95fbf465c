// The contract gates (scripts/contract-gates.ts, docs/compatibility.md): each kind of breaking
// change the gates promise to catch is made to a scratch copy of the contracts and must be
// reported by name; compatible additions must pass; a CHANGELOG entry under a newer version
// accepts a breaking change.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isRecorded, linesNewerThan } from "../../scripts/gates/changelog.js";
import { type Finding, unrecorded } from "../../scripts/gates/findings.js";
import { openApiBreakingChanges } from "../../scripts/gates/openapi-breaking.js";
import { protoBreakingChanges } from "../../scripts/gates/proto-breaking.js";

const ROOT = resolve(import.meta.dirname, "../..");
const scratch = mkdtempSync(join(tmpdir(), "platform-gates-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// biome-ignore lint/suspicious/noExplicitAny: the tests edit an OpenAPI document by path, as JSON.
type Json = Record<string, any>;
const document = (): Json => JSON.parse(readFileSync(join(ROOT, "api", "openapi.json"), "utf8"));
const API = "/api/v1alpha1";
/** Each diff of the whole document takes seconds, more on a busy machine. */
const SLOW = { timeout: 180_000 };

/** Every schema node below `node` (to find an enum wherever the document inlines it). */
function* nodes(node: unknown): Generator<Json> {
  if (node && typeof node === "object") {
    yield node as Json;
    for (const child of Object.values(node)) yield* nodes(child);
  }
}

const wheres = (findings: Finding[]) => new Set(findings.map((f) => f.where));
const messagesAt = (findings: Finding[], where: string) =>
  findings
    .filter((f) => f.where === where)
    .map((f) => f.message)
    .join("\n");

describe("openapi gate", () => {
  it(
    "names each breaking change: operation, response field, enum value, narrowed type, required parameter, status code, webhook field",
    SLOW,
    () => {
      const before = document();
      const after = document();
      delete after.paths[`${API}/deals/by-source`].get;
      const deal = after.components.schemas.Deal;
      delete deal.properties.name;
      deal.required = deal.required.filter((n: string) => n !== "name");
      for (const n of nodes(after.components.schemas)) {
        if (Array.isArray(n.enum) && n.enum.includes("enterprise"))
          n.enum = n.enum.filter((v: string) => v !== "enterprise");
      }
      const limit = after.paths[`${API}/users`].get.parameters.find((p: Json) => p.name === "limit");
      limit.schema.maximum = 50;
      after.paths[`${API}/deals`].get.parameters.push({
        name: "region",
        in: "query",
        required: true,
        schema: { type: "string" },
      });
      const created = after.paths[`${API}/deals`].post.responses;
      created["200"] = created["201"];
      delete created["201"];
      const legacy = after.components.schemas.WebhookLegacyMeeting;
      legacy.properties.meetingId = legacy.properties.id;
      delete legacy.properties.id;
      legacy.required = legacy.required.map((n: string) => (n === "id" ? "meetingId" : n));

      const findings = openApiBreakingChanges(before, after);
      const where = wheres(findings);
      expect(where).toContain(`GET ${API}/deals/by-source`);
      expect(messagesAt(findings, `GET ${API}/deals/{dealId}`)).toMatch(/\[Removed\] property `name`/);
      expect(messagesAt(findings, `GET ${API}/organizations/me/entitlements`)).toMatch(/enum/);
      expect(messagesAt(findings, `GET ${API}/users`)).toMatch(/maximum/);
      expect(messagesAt(findings, `GET ${API}/deals`)).toMatch(/required query parameter `region`/);
      expect(messagesAt(findings, `POST ${API}/deals`)).toMatch(/\[Removed\] Response 201/);
      expect(messagesAt(findings, "webhook scheduling.smartscheduler.booked")).toMatch(
        /property `id` from `payload.meeting`/,
      );
      // Recorded by the operation with or without the API's base path, or by the event kind.
      expect(findings.find((f) => f.where === `GET ${API}/deals`)?.names).toContain("GET /deals");
      expect(findings.find((f) => f.where.startsWith("webhook "))?.names).toContain("scheduling.smartscheduler.booked");
    },
  );

  it(
    "passes compatible additions: an optional response field, an optional parameter, a new operation, a webhook field",
    SLOW,
    () => {
      const before = document();
      const after = document();
      after.components.schemas.Deal.properties.region = { type: ["string", "null"] };
      after.paths[`${API}/deals`].get.parameters.push({
        name: "region",
        in: "query",
        required: false,
        schema: { type: "string" },
      });
      after.paths[`${API}/regions`] = { get: structuredClone(after.paths[`${API}/deals`].get) };
      after.paths[`${API}/regions`].get.operationId = "listRegions";
      after.components.schemas.WebhookLegacyMeeting.properties.region = { type: "string" };
      expect(openApiBreakingChanges(before, after)).toEqual([]);
    },
  );

  it("covers the webhook payloads: removing an event kind breaks its receivers", SLOW, () => {
    const after = document();
    delete after.webhooks["revenue.deal.updated"];
    expect(wheres(openApiBreakingChanges(document(), after))).toEqual(new Set(["webhook revenue.deal.updated"]));
  });
});

describe("proto gate", () => {
  const image = join(scratch, "baseline.binpb");
  const proto = join(scratch, "proto");
  const buf = join(ROOT, "node_modules", ".bin", "buf");
  const events = join(proto, "platform", "events", "revenue", "v1", "events.proto");
  const fresh = () => {
    rmSync(proto, { recursive: true, force: true });
    cpSync(join(ROOT, "proto"), proto, { recursive: true });
  };

  it("names a removed field and a renamed event field by their message", SLOW, () => {
    spawnSync(buf, ["build", "--exclude-source-info", "-o", image], { cwd: join(ROOT, "proto") });
    fresh();
    const source = readFileSync(events, "utf8");
    expect(source).toContain("string previous_stage = 2;");
    expect(source).toContain("string cause = 3;");
    writeFileSync(
      events,
      source.replace("string previous_stage = 2;", "string prior_stage = 2;").replace(/\n\s*string cause = 3;/, ""),
    );
    const findings = protoBreakingChanges(proto, image);
    const renamed = findings.find((f) => f.message.includes('changed name from "previous_stage" to "prior_stage"'));
    expect(renamed?.names).toEqual(["DealUpdated"]);
    expect(renamed?.where).toMatch(/^proto\/platform\/events\/revenue\/v1\/events\.proto:\d+$/);
    const deleted = findings.find((f) => f.message.includes('with name "cause"'));
    expect(deleted?.message).toContain("FIELD_NO_DELETE");
    expect(deleted?.names).toEqual(["QnaUpdated"]);
  });

  it("passes an added field", SLOW, () => {
    fresh();
    const source = readFileSync(events, "utf8");
    writeFileSync(events, source.replace("string cause = 3;", "string cause = 3;\n  // Added.\n  string region = 99;"));
    expect(protoBreakingChanges(proto, image)).toEqual([]);
  });
});

describe("changelog", () => {
  const changelog = [
    "# Changelog",
    "## [Unreleased]",
    "- GET /ignored (no version)",
    "## [2.0.0] - Unreleased",
    "### Removed",
    "- `GET /deals/by-source`: use GET /deals?sourceId=",
    "- DealUpdated.previous_stage renamed; see `DealUpdated`",
    "## [1.0.0] - 2026-12-06",
    "- GET /users",
  ].join("\n");

  it("reads only sections newer than the baseline", SLOW, () => {
    const lines = linesNewerThan(changelog, "1.0.0");
    expect(isRecorded(lines, ["GET /deals/by-source"])).toBe(true);
    expect(isRecorded(lines, ["DealUpdated"])).toBe(true);
    expect(isRecorded(lines, ["GET /users"])).toBe(false);
    expect(isRecorded(lines, ["GET /ignored"])).toBe(false);
    expect(linesNewerThan(changelog, "2.0.0")).toEqual([]);
  });

  it("matches whole names only", SLOW, () => {
    const lines = ["- GET /deals/{dealId}/meetings changed", "- DealUpdatedV2"];
    expect(isRecorded(lines, ["GET /deals/{dealId}"])).toBe(false);
    expect(isRecorded(lines, ["DealUpdated"])).toBe(false);
  });

  it("accepts the findings a line records, never a migration's", SLOW, () => {
    const findings: Finding[] = [
      { gate: "openapi", where: "GET /api/v1alpha1/deals/by-source", message: "", names: ["GET /deals/by-source"] },
      { gate: "openapi", where: "GET /api/v1alpha1/users", message: "", names: ["GET /users"] },
      { gate: "migrations", where: "services/x/migrations/002.sql:1", message: "", names: [] },
    ];
    expect(unrecorded(findings, linesNewerThan(changelog, "1.0.0")).map((f) => f.where)).toEqual([
      "GET /api/v1alpha1/users",
      "services/x/migrations/002.sql:1",
    ]);
  });
});

describe("npm run gates", () => {
  const root = join(scratch, "tree");
  const gates = (...args: string[]) =>
    spawnSync(
      process.execPath,
      ["--import", "tsx", join(ROOT, "scripts", "contract-gates.ts"), "--root", root, ...args],
      {
        cwd: ROOT,
        encoding: "utf8",
      },
    );

  it(
    "fails on a removed response field with a message naming it, and passes once CHANGELOG.md records it",
    SLOW,
    () => {
      mkdirSync(join(root, "api"), { recursive: true });
      mkdirSync(join(root, "releases", "baseline"), { recursive: true });
      writeFileSync(
        join(root, "releases", "baseline.json"),
        JSON.stringify({ version: "1.0.0", commit: "0".repeat(40), tag: "v1.0.0" }),
      );
      cpSync(join(ROOT, "api", "openapi.json"), join(root, "releases", "baseline", "openapi.json"));
      const after = document();
      delete after.components.schemas.Account.properties.summary;
      after.components.schemas.Account.required = after.components.schemas.Account.required.filter(
        (n: string) => n !== "summary",
      );
      writeFileSync(join(root, "api", "openapi.json"), JSON.stringify(after));
      writeFileSync(join(root, "CHANGELOG.md"), "# Changelog\n\n## [1.0.0] - 2026-12-06\n\n- First release.\n");

      const failed = gates("--only", "openapi");
      expect(failed.status).toBe(1);
      expect(failed.stderr).toMatch(/openapi: FAILED against v1\.0\.0/);
      expect(failed.stderr).toMatch(
        /BREAKING GET \/api\/v1alpha1\/accounts\/\{accountId\}\n[\s\S]*?\[Removed\] property `summary`/,
      );
      expect(failed.stderr).toMatch(/under a version newer than 1\.0\.0/);

      const wanted = [...failed.stderr.matchAll(/accepted by a CHANGELOG\.md line naming: "([^"]+)"/g)].map(
        (m) => m[1],
      );
      expect(wanted.length).toBeGreaterThan(0);
      const entry = `## [2.0.0] - Unreleased\n\n### Removed\n\n- Account.summary, from: ${wanted.map((n) => `\`${n}\``).join(", ")}\n\n`;
      writeFileSync(join(root, "CHANGELOG.md"), `# Changelog\n\n${entry}## [1.0.0] - 2026-12-06\n`);
      const passed = gates("--only", "openapi");
      expect(passed.stderr).toBe("");
      expect(passed.stdout).toMatch(/openapi: ok against v1\.0\.0 \(\d+ breaking changes recorded in CHANGELOG\.md\)/);
      expect(passed.status).toBe(0);
    },
  );

  it("answers --help and refuses an unknown gate", SLOW, () => {
    const help = spawnSync(
      process.execPath,
      ["--import", "tsx", join(ROOT, "scripts", "contract-gates.ts"), "--help"],
      {
        cwd: ROOT,
        encoding: "utf8",
      },
    );
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run gates/);
    const bad = gates("--only", "nope");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown gate nope/);
  });
});
