// `platform tokens`: create, list and revoke API tokens.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ALL_SCOPES } from "@platform/kit/scopes";
import type { Command } from "commander";
import { ADMIN_CALL, type AdminCommandDeps, CliError } from "./admin-plane.js";
import { NON_PARTNER_SCOPES, parseScopes, parseTime } from "./arguments.js";
import { scopesCell, status, table, tokenJson } from "./format.js";

export function registerTokenCommands(program: Command, deps: AdminCommandDeps): void {
  const { admin, now, out, json } = deps;
  const tokens = program.command("tokens").description("create, list and revoke API tokens");
  tokens
    .command("create")
    .description("issue an API token; its key is shown once")
    .requiredOption("--org <orgId>", "organization the token belongs to (org_…)")
    .requiredOption(
      "--scopes <scopes>",
      "comma-separated scopes, or: all (every scope the org may hold), read (every :read scope), none",
    )
    .option("--name <name>", "human name", "token")
    .option("--expires-at <time>", "ISO 8601 expiry; a past time makes an already-expired token for testing")
    .option("--json", "print JSON {token, key}")
    .addHelpText(
      "after",
      `
Examples:
  $ platform tokens create --org org_… --scopes all --name ci
  $ platform tokens create --org org_… --scopes read --expires-at 2025-01-01T00:00:00Z --json | jq -r .key`,
    )
    .action(async (opts: { org: string; scopes: string; name: string; expiresAt?: string; json?: boolean }) => {
      const expiresAt = opts.expiresAt === undefined ? undefined : parseTime(opts.expiresAt, "--expires-at");
      let all: readonly string[] = NON_PARTNER_SCOPES;
      if (opts.scopes.trim() === "all") {
        const { organizations } = await admin().listOrganizations({}, ADMIN_CALL);
        if (organizations.find((o) => o.id === opts.org)?.partnerAdmin) all = ALL_SCOPES;
      }
      const { token, key } = await admin().createToken(
        {
          orgId: opts.org,
          name: opts.name,
          scopes: parseScopes(opts.scopes, all),
          expireTime: expiresAt && timestampFromDate(expiresAt),
        },
        ADMIN_CALL,
      );
      if (!token) throw new CliError("the admin plane returned no token");
      const t = tokenJson(token);
      if (opts.json) return json({ token: t, key });
      out(`Created token ${t.id} "${t.name}" for ${t.orgId}`);
      out(`  scopes:  ${t.scopes.join(", ") || "(none)"}`);
      out(
        `  expires: ${t.expiresAt ?? "never"}${t.expiresAt && status(t, now()) === "expired" ? " (already expired)" : ""}`,
      );
      out("");
      out(`Key (shown only now; send it as X-Platform-Api-Key):`);
      out(`  ${key}`);
    });

  tokens
    .command("list")
    .description("list tokens, newest first (keys are never shown, only their first characters)")
    .option("--org <orgId>", "only this organization's tokens")
    .option("--json", "print a JSON array")
    .addHelpText("after", "\nExample:\n  $ platform tokens list --org org_…")
    .action(async (opts: { org?: string; json?: boolean }) => {
      const { tokens: list } = await admin().listTokens({ orgId: opts.org ?? "" }, ADMIN_CALL);
      const rows = list.map(tokenJson);
      if (opts.json) return json(rows);
      const at = now();
      out(
        table(
          ["ID", "ORG", "NAME", "STATUS", "SCOPES", "KEY", "EXPIRES", "CREATED"],
          rows.map((t) => [
            t.id,
            t.orgId,
            t.name,
            status(t, at),
            scopesCell(t.scopes),
            t.keyPreview,
            t.expiresAt ?? "never",
            t.createdAt ?? "",
          ]),
        ),
      );
    });

  tokens
    .command("revoke")
    .description("revoke a token (repeating it keeps the first revocation time)")
    .argument("<tokenId>", "token to revoke (tok_…)")
    .option("--json", "print the token as JSON")
    .addHelpText("after", "\nExample:\n  $ platform tokens revoke tok_…")
    .action(async (tokenId: string, opts: { json?: boolean }) => {
      const { token } = await admin().revokeToken({ tokenId }, ADMIN_CALL);
      if (!token) throw new CliError("the admin plane returned no token");
      const t = tokenJson(token);
      if (opts.json) return json(t);
      out(`Revoked token ${t.id} "${t.name}" of ${t.orgId} at ${t.revokedAt}`);
    });
}
