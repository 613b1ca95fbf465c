// `platform sandbox`: the sandbox's keys, its notable records and generated demo traffic.
import { sandboxFixtures, sandboxKeysOffline } from "@platform/sandbox";
import type { Command } from "commander";
import {
  ADMIN_CALL,
  type AdminCommandDeps,
  DEFAULT_ADMIN_SECRET,
  DEFAULT_SANDBOX_SEED,
  isUnreachable,
} from "./admin-plane.js";
import {
  fixturesTable,
  offlineSandboxKeyJson,
  type SandboxKeyJson,
  sandboxKeyJson,
  scopesCell,
  status,
  table,
} from "./format.js";
import { registerSandboxGenerate } from "./generate.js";

export function registerSandboxCommands(program: Command, deps: AdminCommandDeps): void {
  const { admin, adminUrl, env, now, out, json, stderr } = deps;
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
        keys = (await admin().listSandboxKeys({}, ADMIN_CALL)).keys.map(sandboxKeyJson);
      } catch (err) {
        if (!isUnreachable(err)) throw err;
        const seed = env.SANDBOX_SEED || DEFAULT_SANDBOX_SEED;
        stderr(
          `note: the admin plane at ${adminUrl()} is not reachable; keys computed offline from SANDBOX_SEED="${seed}". ` +
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
      const fixtures = sandboxFixtures(env.SANDBOX_SEED || DEFAULT_SANDBOX_SEED);
      if (opts.json) return json(fixtures);
      out(fixturesTable(fixtures));
    });

  registerSandboxGenerate(sandbox, {
    adminUrl,
    adminSecret: env.PLATFORM_ADMIN_SECRET || DEFAULT_ADMIN_SECRET,
    sandboxSeed: env.SANDBOX_SEED || DEFAULT_SANDBOX_SEED,
    now,
    out,
    progress: stderr,
  });
}
