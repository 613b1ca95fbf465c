// `platform orgs`, `partners` and `audit`: the organizations, their partner grants and the delegation audit.
import type { Command } from "commander";
import { ADMIN_CALL, type AdminCommandDeps, CliError } from "./admin-plane.js";
import { MAX_AUDIT_LIMIT, NON_PARTNER_SCOPES, parseAuditLimit, parseScopes } from "./arguments.js";
import { auditEntryJson, organizationJson, relationshipJson, table } from "./format.js";

export function registerOrgCommands(program: Command, deps: AdminCommandDeps): void {
  const { admin, out, json } = deps;
  program
    .command("orgs")
    .description("organizations")
    .command("list")
    .description("list every organization with its partner role and parent")
    .option("--json", "print a JSON array")
    .action(async (opts: { json?: boolean }) => {
      const { organizations } = await admin().listOrganizations({}, ADMIN_CALL);
      const rows = organizations.map(organizationJson);
      if (opts.json) return json(rows);
      out(
        table(
          ["ID", "NAME", "PARTNER ADMIN", "PARENT"],
          rows.map((o) => [o.id, o.name, o.partnerAdmin ? "yes" : "no", o.parentOrgId ?? "-"]),
        ),
      );
    });

  const partners = program.command("partners").description("partner relationships and the scopes children grant");
  /** Prints the relationship a grant or revocation answers with (or fails when there is none). */
  const printRelationship = (
    answer: { relationship?: Parameters<typeof relationshipJson>[0] },
    asJson: boolean | undefined,
    verb: string,
  ) => {
    if (!answer.relationship) throw new CliError("the admin plane returned no relationship");
    const r = relationshipJson(answer.relationship);
    if (asJson) return json(r);
    out(`${verb}: ${r.parentOrgId} → ${r.childOrgId}`);
    out(`  granted scopes: ${r.grantedScopes.join(", ") || "(none)"}`);
    out(`  since ${r.createdAt}${r.revokedAt ? `, revoked at ${r.revokedAt}` : ""}`);
  };
  partners
    .command("grant")
    .description("make --child a managed child of --parent (a partner-admin org) granting --scopes; replaces a grant")
    .requiredOption("--parent <orgId>", "partner-admin parent organization (org_…)")
    .requiredOption("--child <orgId>", "child organization (org_…)")
    .requiredOption("--scopes <scopes>", "comma-separated scopes the child grants, or: all, read, none")
    .option("--json", "print the relationship as JSON")
    .addHelpText("after", "\nExample:\n  $ platform partners grant --parent org_… --child org_… --scopes read")
    .action(async (opts: { parent: string; child: string; scopes: string; json?: boolean }) => {
      const grantedScopes = parseScopes(opts.scopes, NON_PARTNER_SCOPES);
      const grant = { parentOrgId: opts.parent, childOrgId: opts.child, grantedScopes };
      printRelationship(await admin().setPartnerGrant(grant, ADMIN_CALL), opts.json, "Granted");
    });
  partners
    .command("revoke")
    .description("end a parent-child relationship")
    .requiredOption("--parent <orgId>", "parent organization (org_…)")
    .requiredOption("--child <orgId>", "child organization (org_…)")
    .option("--json", "print the relationship as JSON")
    .addHelpText("after", "\nExample:\n  $ platform partners revoke --parent org_… --child org_…")
    .action(async (opts: { parent: string; child: string; json?: boolean }) => {
      const pair = { parentOrgId: opts.parent, childOrgId: opts.child };
      printRelationship(await admin().revokePartnerGrant(pair, ADMIN_CALL), opts.json, "Revoked");
    });

  program
    .command("audit")
    .description("the delegation audit: requests partners made on behalf of their child organizations")
    .command("list")
    .description("list delegated requests, newest first")
    .option("--parent <orgId>", "only requests of this partner organization (org_…)")
    .option("--org <orgId>", "only requests acting on this child organization (org_…)")
    .option("--limit <n>", `at most this many entries, 1 to ${MAX_AUDIT_LIMIT}`, "50")
    .option("--json", "print a JSON array of {id, parentOrgId, orgId, tokenId, method, path, status, requestId, time}")
    .addHelpText(
      "after",
      "\nExamples:\n  $ platform audit list --parent org_…\n  $ platform audit list --org org_… --limit 200 --json",
    )
    .action(async (opts: { parent?: string; org?: string; limit: string; json?: boolean }) => {
      const limit = parseAuditLimit(opts.limit);
      const { entries } = await admin().listDelegationAudit(
        { parentOrgId: opts.parent ?? "", orgId: opts.org ?? "", limit },
        ADMIN_CALL,
      );
      const rows = entries.map(auditEntryJson);
      if (opts.json) return json(rows);
      out(
        table(
          ["TIME", "PARENT", "ORG", "METHOD", "PATH", "STATUS", "TOKEN", "REQUEST"],
          rows.map((e) => [
            e.time ?? "",
            e.parentOrgId,
            e.orgId,
            e.method,
            e.path,
            String(e.status),
            e.tokenId,
            e.requestId,
          ]),
        ),
      );
    });
}
