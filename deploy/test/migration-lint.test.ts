// The migration lint (scripts/gates/migration-lint.ts, docs/compatibility.md): Squawk's
// destructive-DDL rules over services/*/migrations/*.sql of a scratch tree, outside the contract
// phase; released migrations grandfathered, and frozen.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  contractPhaseReason,
  migrationBaseline,
  migrationFiles,
  migrationFindings,
  sha256,
} from "../../scripts/gates/migration-lint.js";

const ROOT = resolve(import.meta.dirname, "../..");
const scratch = mkdtempSync(join(tmpdir(), "platform-migrations-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let trees = 0;
/** A tree with one service whose migrations are `files` (name → SQL). */
function tree(files: Record<string, string>): string {
  const root = join(scratch, `t${trees++}`);
  const dir = join(root, "services", "demo", "migrations");
  mkdirSync(dir, { recursive: true });
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return root;
}

const CREATE = "CREATE TABLE demo (id text PRIMARY KEY, name text NOT NULL, size int);\n";
const rules = (findings: { message: string }[]) =>
  findings.map((f) => /\(squawk ([a-z-]+)\)/.exec(f.message)?.[1] ?? f.message);

describe("migration lint", () => {
  it("refuses each kind of destructive DDL outside the contract phase, naming file, line and rule", () => {
    const statements: [string, string][] = [
      ["ALTER TABLE demo DROP COLUMN size;", "ban-drop-column"],
      ["DROP TABLE demo;", "ban-drop-table"],
      ["ALTER TABLE demo RENAME COLUMN name TO title;", "renaming-column"],
      ["ALTER TABLE demo RENAME TO demos;", "renaming-table"],
      ["ALTER TABLE demo ADD COLUMN owner text NOT NULL;", "adding-required-field"],
      ["ALTER TABLE demo ALTER COLUMN size SET NOT NULL;", "adding-not-nullable-field"],
      ["ALTER TABLE demo ALTER COLUMN name TYPE varchar(20);", "changing-column-type"],
    ];
    const files = Object.fromEntries(statements.map(([sql], i) => [`00${i + 2}_change.sql`, `-- A change.\n${sql}\n`]));
    const root = tree({ "001_demo.sql": CREATE, ...files });
    const findings = migrationFindings(root, {});
    expect(rules(findings)).toEqual(statements.map(([, rule]) => rule));
    expect(findings[0]?.where).toBe("services/demo/migrations/002_change.sql:2");
    expect(findings[0]?.message).toContain("-- contract-phase: <reason>");
  });

  it("passes additive DDL: new tables, nullable columns, NOT NULL with a default, indexes", () => {
    const root = tree({
      "001_demo.sql": CREATE,
      "002_expand.sql": [
        "ALTER TABLE demo ADD COLUMN region text;",
        "ALTER TABLE demo ADD COLUMN tier text NOT NULL DEFAULT 'free';",
        "CREATE TABLE demo_tags (demo_id text NOT NULL REFERENCES demo (id), tag text NOT NULL);",
        "CREATE INDEX demo_region ON demo (region);",
        "ALTER TABLE demo ALTER COLUMN size DROP NOT NULL;",
      ].join("\n"),
    });
    expect(migrationFindings(root, {})).toEqual([]);
  });

  it("allows destructive DDL in a migration marked as the contract phase, with a reason", () => {
    const drop = "ALTER TABLE demo DROP COLUMN size;\n";
    expect(contractPhaseReason(`-- contract-phase: 1.2.0 stopped reading size\n${drop}`)).toBe(
      "1.2.0 stopped reading size",
    );
    expect(contractPhaseReason(`-- Why.\n\n-- contract-phase: no release reads it\n${drop}`)).toBe(
      "no release reads it",
    );
    // No reason, or the marker below the first statement: not the contract phase.
    expect(contractPhaseReason(`-- contract-phase:\n${drop}`)).toBeUndefined();
    expect(contractPhaseReason(`-- contract-phase:\n-- a comment\n${drop}`)).toBeUndefined();
    expect(contractPhaseReason(`${drop}-- contract-phase: too late\n`)).toBeUndefined();
    const root = tree({
      "001_demo.sql": CREATE,
      "002_contract.sql": `-- contract-phase: 1.2.0 stopped reading size\n${drop}`,
    });
    expect(migrationFindings(root, {})).toEqual([]);
  });

  it("grandfathers released migrations, and refuses one whose text changed", () => {
    const drop = "DROP TABLE demo;\n";
    const root = tree({ "001_demo.sql": CREATE, "002_drop.sql": drop });
    const released = migrationBaseline(root);
    expect(released).toEqual({
      "services/demo/migrations/001_demo.sql": sha256(CREATE),
      "services/demo/migrations/002_drop.sql": sha256(drop),
    });
    expect(migrationFindings(root, released)).toEqual([]);
    writeFileSync(join(root, "services", "demo", "migrations", "001_demo.sql"), `${CREATE}-- edited\n`);
    const findings = migrationFindings(root, released);
    expect(findings.map((f) => f.where)).toEqual(["services/demo/migrations/001_demo.sql"]);
    expect(findings[0]?.message).toMatch(/a released migration changed/);
  });

  it("reads every service's migrations in this repository", () => {
    const files = migrationFiles(ROOT);
    expect(files).toContain("services/webhooks/migrations/001_webhooks.sql");
    expect(files.every((f) => /^services\/[^/]+\/migrations\/[^/]+\.sql$/.test(f))).toBe(true);
  });
});
