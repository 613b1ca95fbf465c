import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type {
  ApiToken,
  DelegationAuditEntry,
  OrganizationSummary,
  PartnerRelationship,
  SandboxKey,
} from "@platform/contracts/identity";
import { sandboxKeyInfo } from "@platform/contracts/sandbox-key";
import { tokenState } from "@platform/kit/api-keys";
import type { SandboxFixture, SandboxKeyInfo } from "@platform/sandbox";

// Machine output (`--json`): plain objects with ISO 8601 UTC times and explicit nulls.

const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);

export function tokenJson(t: ApiToken) {
  return {
    id: t.id,
    orgId: t.orgId,
    name: t.name,
    scopes: t.scopes,
    keyPreview: t.keyPreview,
    expiresAt: iso(t.expireTime),
    revokedAt: iso(t.revokeTime),
    createdAt: iso(t.createTime),
  };
}

export function organizationJson(o: OrganizationSummary) {
  return { id: o.id, name: o.name, partnerAdmin: o.partnerAdmin, parentOrgId: o.parentOrgId || null };
}

export function relationshipJson(r: PartnerRelationship) {
  return {
    parentOrgId: r.parentOrgId,
    childOrgId: r.childOrgId,
    grantedScopes: r.grantedScopes,
    createdAt: iso(r.createTime),
    updatedAt: iso(r.updateTime),
    revokedAt: iso(r.revokeTime),
  };
}

export function auditEntryJson(e: DelegationAuditEntry) {
  return {
    id: e.id,
    parentOrgId: e.parentOrgId,
    orgId: e.orgId,
    tokenId: e.tokenId,
    method: e.method,
    path: e.path,
    status: e.status,
    requestId: e.requestId,
    time: iso(e.time),
  };
}

/** A sandbox key as the CLI prints it: times as ISO text. */
export type SandboxKeyJson = Omit<SandboxKeyInfo, "expiresAt" | "revokedAt"> & {
  expiresAt: string | null;
  revokedAt: string | null;
};

/** The shape from the sandbox definition, for when the admin plane is not reachable. */
export function offlineSandboxKeyJson(k: SandboxKeyInfo): SandboxKeyJson {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return { ...k, scopes: [...k.scopes], expiresAt: iso(k.expiresAt), revokedAt: iso(k.revokedAt) };
}

/** The same shape from the admin plane's answer. */
export const sandboxKeyJson = (k: SandboxKey): SandboxKeyJson => offlineSandboxKeyJson(sandboxKeyInfo(k));

/** "active", "expired" or "revoked", judged now. */
export function status(t: { expiresAt: string | null; revokedAt: string | null }, now: Date): string {
  const date = (s: string | null) => (s ? new Date(s) : null);
  return tokenState({ expiresAt: date(t.expiresAt), revokedAt: date(t.revokedAt) }, now);
}

/** Scopes for a table cell: short lists in full, long ones counted. */
export function scopesCell(scopes: readonly string[]): string {
  if (scopes.length === 0) return "(none)";
  return scopes.length <= 3 ? scopes.join(",") : `${scopes.length} scopes`;
}

/** A plain left-aligned text table. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return "(none)";
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

const keyCell = (f: SandboxFixture) => (f.actingOn ? `${f.key}, acting on it` : f.key);

/** The fixtures as `platform sandbox fixtures` prints them (and the README shows them). */
export function fixturesTable(fixtures: readonly SandboxFixture[]): string {
  return table(
    ["SCENARIO", "ID", "GET", "KEY", "WHAT IT SHOWS"],
    fixtures.map((f) => [f.scenario, f.id, f.path.replace(f.id, "{id}"), keyCell(f), f.description]),
  );
}

/** The same fixtures as a Markdown table (the README's sandbox section carries it for the default seed). */
export function fixturesMarkdown(fixtures: readonly SandboxFixture[]): string {
  const rows = fixtures.map(
    (f) =>
      `| \`${f.scenario}\` | \`${f.id}\` | \`GET ${f.path.replace(f.id, "{id}")}\` | ${keyCell(f)} | ${f.description} |`,
  );
  return ["| scenario | id | request | key | what it shows |", "|---|---|---|---|---|", ...rows].join("\n");
}
