import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import { ProblemSchema } from "@platform/contracts/common";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminPlaneConfig, serviceConfig } from "@platform/kit/config";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { ALL_SCOPES, PARTNER_SCOPE, READ_SCOPES } from "@platform/kit/scopes";
import { sandboxFixtures, sandboxKeysOffline } from "@platform/sandbox";
import { Command, CommanderError } from "commander";
import { registerEventCommands } from "./events-commands.js";
import {
  auditEntryJson,
  fixturesTable,
  offlineSandboxKeyJson,
  organizationJson,
  relationshipJson,
  type SandboxKeyJson,
  sandboxKeyJson,
  scopesCell,
  status,
  table,
  tokenJson,
} from "./format.js";
import { registerSandboxGenerate } from "./generate.js";

/** Where the CLI reads its environment and writes; `process` in real use, buffers in tests. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  now?: () => Date;
}

const DEFAULT_ADMIN_URL = "http://127.0.0.1:8081";
// The platform's defaults for both, from the kit's config (the CLI imports no service).
const DEFAULT_SANDBOX_SEED = serviceConfig.SANDBOX_SEED.default;
const DEFAULT_ADMIN_SECRET = adminPlaneConfig.PLATFORM_ADMIN_SECRET.default;
const CALL_TIMEOUT_MS = 10_000;

/** A failure already phrased for the user. */
class CliError extends Error {}

type AdminClient = Client<typeof IdentityAdminService>;

const NON_PARTNER_SCOPES = ALL_SCOPES.filter((s) => s !== PARTNER_SCOPE);

/** `a,b`, `all` (every scope in `all`), `read` (every :read scope) or `none`; the server validates names. */
function parseScopes(raw: string, all: readonly string[]): string[] {
  const value = raw.trim();
  if (value === "all") return [...all];
  if (value === "read") return [...READ_SCOPES];
  if (value === "none" || value === "") return [];
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

const MAX_AUDIT_LIMIT = 500;

function parseAuditLimit(raw: string): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= MAX_AUDIT_LIMIT)) {
    throw new CliError(`--limit must be an integer from 1 to ${MAX_AUDIT_LIMIT}, not '${raw}'`);
  }
  return n;
}

function parseTime(raw: string, flag: string): Date {
  const ms = Date.parse(raw);
  if (Number.isNaN(ms))
    throw new CliError(`${flag} must be an ISO 8601 time such as 2026-12-31T23:59:59Z, not '${raw}'`);
  return new Date(ms);
}

/** Turns a failed admin call into one line naming the cause. */
function describeFailure(err: unknown, adminUrl: string): string {
  if (err instanceof CliError) return err.message;
  const ce = ConnectError.from(err);
  const [problem] = ce.findDetails(ProblemSchema);
  if (problem) return `${problem.name}: ${problem.detail}`;
  if (ce.code === Code.Unavailable || ce.code === Code.DeadlineExceeded) {
    return `cannot reach the admin plane at ${adminUrl} (${ce.rawMessage}); is the platform running? \`npm start\` runs it, or pass --admin-url`;
  }
  if (ce.code === Code.Unauthenticated) {
    return `the admin plane at ${adminUrl} rejected the admin secret; set PLATFORM_ADMIN_SECRET to the platform's value`;
  }
  return `admin call failed (${Code[ce.code]}): ${ce.rawMessage}`;
}

function isUnreachable(err: unknown): boolean {
  const code = ConnectError.from(err).code;
  return code === Code.Unavailable || code === Code.DeadlineExceeded;
}

const EXAMPLES = `
Examples:
  $ platform orgs list
  $ platform sandbox keys
  $ platform sandbox fixtures
  $ platform sandbox generate --emails 10000
  $ platform tokens create --org org_… --scopes read --name reporting
  $ platform tokens create --org org_… --scopes deals:read,deals:write --expires-at 2026-12-31T00:00:00Z --json
  $ platform tokens revoke tok_…
  $ platform partners grant --parent org_… --child org_… --scopes organizations:read,users:read
  $ platform audit list --parent org_… --limit 20

Environment:
  PLATFORM_ADMIN_URL     admin plane address (default ${DEFAULT_ADMIN_URL}); --admin-url overrides it
  PLATFORM_ADMIN_SECRET  admin secret (default: the platform's development secret)
  SANDBOX_SEED           sandbox seed, for \`sandbox keys\` when the platform is not running (default "${DEFAULT_SANDBOX_SEED}")`;

/**
 * Runs the `platform` command line with `argv` (the arguments after the program name) and
 * resolves to the exit code. Machine output (`--json`) is the only thing on stdout.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const now = io.now ?? (() => new Date());
  const out = (text: string) => io.stdout(`${text}\n`);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  let adminUrl = io.env.PLATFORM_ADMIN_URL || DEFAULT_ADMIN_URL;
  let client: AdminClient | undefined;
  const admin = (): AdminClient => {
    client ??= createClient(
      IdentityAdminService,
      httpTransport(adminUrl, [adminClientInterceptor(io.env.PLATFORM_ADMIN_SECRET || DEFAULT_ADMIN_SECRET)]),
    );
    return client;
  };
  const call = { timeoutMs: CALL_TIMEOUT_MS };

  const program = new Command("platform")
    .description(
      "Administer the Platform Integration API: API tokens, organizations, partner grants, the delegation audit, sandbox keys.",
    )
    .option("--admin-url <url>", "admin plane address (env PLATFORM_ADMIN_URL)", adminUrl)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", EXAMPLES)
    .hook("preAction", (cmd) => {
      adminUrl = String(cmd.opts().adminUrl).replace(/\/$/, "");
    });

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
        const { organizations } = await admin().listOrganizations({}, call);
        if (organizations.find((o) => o.id === opts.org)?.partnerAdmin) all = ALL_SCOPES;
      }
      const { token, key } = await admin().createToken(
        {
          orgId: opts.org,
          name: opts.name,
          scopes: parseScopes(opts.scopes, all),
          expireTime: expiresAt && timestampFromDate(expiresAt),
        },
        call,
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
      const { tokens: list } = await admin().listTokens({ orgId: opts.org ?? "" }, call);
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
      const { token } = await admin().revokeToken({ tokenId }, call);
      if (!token) throw new CliError("the admin plane returned no token");
      const t = tokenJson(token);
      if (opts.json) return json(t);
      out(`Revoked token ${t.id} "${t.name}" of ${t.orgId} at ${t.revokedAt}`);
    });

  program
    .command("orgs")
    .description("organizations")
    .command("list")
    .description("list every organization with its partner role and parent")
    .option("--json", "print a JSON array")
    .action(async (opts: { json?: boolean }) => {
      const { organizations } = await admin().listOrganizations({}, call);
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
  const printRelationship = (r: ReturnType<typeof relationshipJson>, asJson: boolean | undefined, verb: string) => {
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
      const { relationship } = await admin().setPartnerGrant(
        {
          parentOrgId: opts.parent,
          childOrgId: opts.child,
          grantedScopes: parseScopes(opts.scopes, NON_PARTNER_SCOPES),
        },
        call,
      );
      if (!relationship) throw new CliError("the admin plane returned no relationship");
      printRelationship(relationshipJson(relationship), opts.json, "Granted");
    });
  partners
    .command("revoke")
    .description("end a parent-child relationship")
    .requiredOption("--parent <orgId>", "parent organization (org_…)")
    .requiredOption("--child <orgId>", "child organization (org_…)")
    .option("--json", "print the relationship as JSON")
    .addHelpText("after", "\nExample:\n  $ platform partners revoke --parent org_… --child org_…")
    .action(async (opts: { parent: string; child: string; json?: boolean }) => {
      const { relationship } = await admin().revokePartnerGrant(
        { parentOrgId: opts.parent, childOrgId: opts.child },
        call,
      );
      if (!relationship) throw new CliError("the admin plane returned no relationship");
      printRelationship(relationshipJson(relationship), opts.json, "Revoked");
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
        call,
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

  const sandbox = program.command("sandbox").description("the sandbox's demo data");
  sandbox
    .command("keys")
    .description("show the documented sandbox API keys (computed from SANDBOX_SEED when the platform is not running)")
    .option("--json", "print a JSON array of {name, key, tokenId, orgId, orgName, scopes, expiresAt, revokedAt}")
    .addHelpText(
      "after",
      "\nExample:\n  $ platform sandbox keys --json | jq -r '.[] | select(.name == \"acme-full\") | .key'",
    )
    .action(async (opts: { json?: boolean }) => {
      let keys: SandboxKeyJson[];
      try {
        keys = (await admin().listSandboxKeys({}, call)).keys.map(sandboxKeyJson);
      } catch (err) {
        if (!isUnreachable(err)) throw err;
        const seed = io.env.SANDBOX_SEED || DEFAULT_SANDBOX_SEED;
        io.stderr(
          `note: the admin plane at ${adminUrl} is not reachable; keys computed offline from SANDBOX_SEED="${seed}". ` +
            "Revocations or changes made later are not reflected.\n",
        );
        keys = sandboxKeysOffline(seed).map(offlineSandboxKeyJson);
      }
      if (opts.json) return json(keys);
      const at = now();
      out(
        table(
          ["NAME", "ORG", "STATUS", "SCOPES", "KEY"],
          keys.map((k) => [k.name, `${k.orgName} (${k.orgId})`, status(k, at), scopesCell(k.scopes), k.key]),
        ),
      );
    });

  sandbox
    .command("fixtures")
    .description(
      "list the sandbox's notable records by scenario (expired transcript, failed bot, revoked child, closed deal, …), derived from SANDBOX_SEED",
    )
    .option("--json", "print a JSON array of {scenario, description, kind, id, orgId, path, key, actingOn}")
    .addHelpText(
      "after",
      `
The ids derive from the sandbox seed, so they are the same on every machine that uses the
same SANDBOX_SEED as the platform (default "${DEFAULT_SANDBOX_SEED}"); the platform need not be running.
Each row's PATH is a request (with a key of its org, e.g. acme-full) that shows the scenario.

Example:
  $ platform sandbox fixtures --json | jq -r '.[] | select(.scenario == "failed-bot") | .path'`,
    )
    .action((opts: { json?: boolean }) => {
      const fixtures = sandboxFixtures(io.env.SANDBOX_SEED || DEFAULT_SANDBOX_SEED);
      if (opts.json) return json(fixtures);
      out(fixturesTable(fixtures));
    });

  registerSandboxGenerate(sandbox, {
    adminUrl: () => adminUrl,
    adminSecret: io.env.PLATFORM_ADMIN_SECRET || DEFAULT_ADMIN_SECRET,
    sandboxSeed: io.env.SANDBOX_SEED || DEFAULT_SANDBOX_SEED,
    now,
    out,
    progress: io.stderr,
  });

  // The public API with an API key: listen and trigger.
  registerEventCommands(program, { env: io.env, stdout: io.stdout, stderr: io.stderr, now });

  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (err) {
    // Commander has already printed its own usage errors (and help, which exits 0).
    if (err instanceof CommanderError) return err.exitCode;
    io.stderr(`error: ${describeFailure(err, adminUrl)}\n`);
    return 1;
  }
}
