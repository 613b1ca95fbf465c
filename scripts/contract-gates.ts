// `npm run gates`: the contract gates (docs/compatibility.md). Run with --help for the usage.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { linesNewerThan } from "./gates/changelog.js";
import { type Finding, formatFindings, unrecorded } from "./gates/findings.js";
import { type MigrationBaseline, migrationFindings } from "./gates/migration-lint.js";
import { openApiBreakingChanges } from "./gates/openapi-breaking.js";
import { protoBreakingChanges } from "./gates/proto-breaking.js";
import { REPO } from "./gates/tools.js";

const USAGE = `usage: npm run gates -- [--only GATE[,GATE…]] [--root DIR]

The contract gates, each compared with the last release's baseline (releases/baseline.json
and releases/baseline/, written by scripts/release.sh):
  fresh       api/openapi.json is what the gateway's routes generate (npm run generate:openapi)
  proto       buf breaking over proto/ (RPC and Kafka event messages) against
              releases/baseline/proto.binpb
  openapi     api/openapi.json against releases/baseline/openapi.json (api-smart-diff): operations,
              parameters, request and response bodies, status codes, enums, and the webhook
              payloads (v2 and legacy, the document's webhooks)
  migrations  squawk over services/*/migrations/*.sql: no destructive DDL outside a migration
              marked "-- contract-phase: <reason>"; released migrations never change

A breaking proto or OpenAPI change passes only when CHANGELOG.md has a section for a version
newer than the baseline's (## [2.0.0] - Unreleased) with a line naming what broke: the
operation ("GET /deals/{dealId}"), the webhook event kind ("revenue.deal.updated") or the
proto message, enum or service ("DealUpdated"). Each failure says which name it wants.

  --only   run only these gates (default: all)
  --root   check another tree (a scratch copy of this repository); the tools still come from
           this one. "fresh" reads this repository's routes, so it is skipped for another root.
Exit status: 0 when every gate passes, 1 when one fails, 2 on a usage error.`;

const GATES = ["fresh", "proto", "openapi", "migrations"] as const;
type Gate = (typeof GATES)[number];

interface Baseline {
  version: string;
  commit: string;
  tag: string;
}

export interface GateResult {
  ok: boolean;
  lines: string[];
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

/** Whether api/openapi.json under `root` is what the routes generate now. */
async function isFresh(root: string): Promise<boolean> {
  const { openApiDocument } = await import("./openapi-document.js");
  const generated = `${JSON.stringify(await openApiDocument({}), null, 2)}\n`;
  const committed = join(root, "api", "openapi.json");
  return existsSync(committed) && readFileSync(committed, "utf8") === generated;
}

/** Runs the gates over the tree at `root`; the lines say what each found. */
export async function contractGates(root: string, only: readonly Gate[] = GATES): Promise<GateResult> {
  const lines: string[] = [];
  let ok = true;
  const wants = (g: Gate) => only.includes(g);

  if (wants("fresh") && resolve(root) === resolve(REPO)) {
    if (await isFresh(root)) {
      lines.push("fresh: api/openapi.json is up to date");
    } else {
      ok = false;
      lines.push("fresh: FAILED api/openapi.json is stale: run 'npm run generate:openapi' and commit the result");
    }
  }

  const baselineFile = join(root, "releases", "baseline.json");
  const baseline = existsSync(baselineFile) ? readJson<Baseline>(baselineFile) : undefined;
  const dir = join(root, "releases", "baseline");
  if (!baseline)
    lines.push(
      "no release recorded (releases/baseline.json): nothing to compare with; the first release (scripts/release.sh) grandfathers every migration",
    );

  const findings: Finding[] = [];
  if (baseline && wants("proto")) findings.push(...protoBreakingChanges(join(root, "proto"), join(dir, "proto.binpb")));
  if (baseline && wants("openapi")) {
    const before = readJson<Record<string, unknown>>(join(dir, "openapi.json"));
    const after = readJson<Record<string, unknown>>(join(root, "api", "openapi.json"));
    findings.push(...openApiBreakingChanges(before, after));
  }
  if (baseline && wants("migrations")) {
    const released = join(dir, "migrations.json");
    findings.push(...migrationFindings(root, existsSync(released) ? readJson<MigrationBaseline>(released) : {}));
  }

  const changelog = join(root, "CHANGELOG.md");
  const recordLines =
    baseline && existsSync(changelog) ? linesNewerThan(readFileSync(changelog, "utf8"), baseline.version) : [];
  const failing = unrecorded(findings, recordLines);
  const accepted = findings.filter((f) => !failing.includes(f));
  for (const gate of ["proto", "openapi", "migrations"] as const) {
    if (!wants(gate) || !baseline) continue;
    const mine = failing.filter((f) => f.gate === gate);
    const fine = accepted.filter((f) => f.gate === gate);
    const against = gate === "migrations" ? "" : ` against ${baseline?.tag}`;
    if (mine.length === 0) {
      lines.push(
        `${gate}: ok${against}${fine.length ? ` (${fine.length} breaking changes recorded in CHANGELOG.md)` : ""}`,
      );
    } else {
      ok = false;
      lines.push(`${gate}: FAILED${against}: ${mine.length} breaking changes`, ...formatFindings(mine));
    }
  }
  if (!ok && failing.some((f) => f.gate !== "migrations")) {
    lines.push(
      `To make a breaking change deliberately, record it in CHANGELOG.md under a version newer than ${baseline?.version} (e.g. "## [${nextMajor(baseline?.version)}] - Unreleased"), one line naming each change as shown above; see docs/compatibility.md.`,
    );
  }
  return { ok, lines };
}

const nextMajor = (version = "0.0.0") => `${Number(version.split(".")[0]) + 1}.0.0`;

function parseArgs(argv: string[]): { root: string; only: Gate[] } {
  let root = REPO;
  let only: Gate[] = [...GATES];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else if (arg === "--root" && argv[i + 1]) {
      root = resolve(argv[++i] ?? "");
    } else if (arg === "--only" && argv[i + 1]) {
      const names = (argv[++i] ?? "").split(",");
      const unknown = names.filter((n) => !(GATES as readonly string[]).includes(n));
      if (unknown.length > 0) usageError(`unknown gate ${unknown.join(", ")}; the gates are ${GATES.join(", ")}`);
      only = names as Gate[];
    } else {
      usageError(`unknown argument ${arg}`);
    }
  }
  return { root, only };
}

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { root, only } = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const result = await contractGates(root, only);
  for (const line of result.lines) (result.ok ? console.log : console.error)(line);
  console.log(
    `contract gates: ${result.ok ? "passed" : "FAILED"} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  process.exit(result.ok ? 0 : 1);
}
