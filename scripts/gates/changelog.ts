import semver from "semver";

// How a breaking change is accepted: CHANGELOG.md (Keep a Changelog) has a section for a
// version newer than the last release's (`## [2.0.0] - Unreleased`), and one of that section's
// lines names what broke (the operation, the webhook event kind, the proto message, the
// migration file: each gate says which name it wants). Nothing else is read.

/** A version section of the changelog: `## [1.2.0] - 2026-12-06` or `## 1.2.0`. */
const SECTION = /^##\s+\[?v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\]?/;

export interface ChangelogSection {
  version: string;
  lines: string[];
}

/** The version sections of a changelog, in the order written (an `[Unreleased]` section has no version and is skipped). */
export function changelogSections(markdown: string): ChangelogSection[] {
  const sections: ChangelogSection[] = [];
  let current: ChangelogSection | undefined;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("## ")) {
      const version = SECTION.exec(line)?.[1];
      current = version ? { version, lines: [] } : undefined;
      if (current) sections.push(current);
    } else {
      current?.lines.push(line);
    }
  }
  return sections;
}

/** The lines of every section whose version is newer than `baseline`: where breaking changes are recorded. */
export function linesNewerThan(markdown: string, baseline: string): string[] {
  return changelogSections(markdown)
    .filter((s) => semver.gt(s.version, baseline))
    .flatMap((s) => s.lines);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Whether one of `lines` names any of `names`, as a whole word (`DealUpdated` does not match
 * `DealUpdatedV2`; `GET /deals/{dealId}` does not match `GET /deals/{dealId}/meetings`).
 */
export function isRecorded(lines: string[], names: string[]): boolean {
  const patterns = names.map((n) => new RegExp(`(^|[\\s\`'"(,])${escapeRegExp(n)}($|[\\s\`'"),.:;])`));
  return lines.some((line) => patterns.some((p) => p.test(line)));
}
