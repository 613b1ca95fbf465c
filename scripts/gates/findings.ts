import { isRecorded } from "./changelog.js";

/** One breaking change a gate found. */
export interface Finding {
  gate: "openapi" | "proto" | "migrations";
  /** Where it is: an operation, a webhook, a proto file and line, a migration file. */
  where: string;
  /** What broke, in the tool's words. */
  message: string;
  /** The names that, on a line of a newer version's CHANGELOG section, record (accept) it. */
  names: string[];
}

/** The findings not recorded in the changelog's newer sections: these fail the gate. */
export function unrecorded(findings: Finding[], changelogLines: string[]): Finding[] {
  return findings.filter((f) => f.names.length === 0 || !isRecorded(changelogLines, f.names));
}

/** Findings as lines, grouped by where they are, each group saying which name records it. */
export function formatFindings(findings: Finding[]): string[] {
  const byWhere = new Map<string, Finding[]>();
  for (const f of findings) byWhere.set(f.where, [...(byWhere.get(f.where) ?? []), f]);
  const lines: string[] = [];
  for (const [where, group] of byWhere) {
    lines.push(`  ${group[0]?.gate}: BREAKING ${where}`);
    for (const message of new Set(group.map((f) => f.message))) lines.push(`      ${message}`);
    const names = group[0]?.names ?? [];
    if (names.length > 0)
      lines.push(`      (accepted by a CHANGELOG.md line naming: ${names.map((n) => `"${n}"`).join(" or ")})`);
  }
  return lines;
}
