import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { Command, CommanderError } from "commander";
import { type AdminClient, type AdminCommandDeps, DEFAULT_ADMIN_SECRET, describeFailure } from "./admin-plane.js";
import { registerDeliveriesCommands } from "./deliveries-commands.js";
import { endpoints } from "./endpoints.js";
import { registerEventCommands } from "./events-commands.js";
import { EXAMPLES } from "./help.js";
import { registerOrgCommands } from "./org-commands.js";
import { registerRequestCommands } from "./request-commands.js";
import { registerSandboxCommands } from "./sandbox-commands.js";
import { registerTokenCommands } from "./token-commands.js";

/** Where the CLI reads its environment and writes; `process` in real use, buffers in tests. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  now?: () => Date;
  /** Ends `listen` (tests); SIGINT and SIGTERM do otherwise. */
  signal?: AbortSignal;
  /** Connection attempts of `listen` before it gives up, with short waits (tests). */
  connectAttempts?: number;
}

/**
 * Runs the `platform` command line with `argv` (the arguments after the program name) and
 * resolves to the exit code. Machine output (`--json`) is the only thing on stdout.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const now = io.now ?? (() => new Date());
  const out = (text: string) => io.stdout(`${text}\n`);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  let adminUrl = endpoints(io.env).adminUrl;
  let client: AdminClient | undefined;
  const admin = (): AdminClient => {
    client ??= createClient(
      IdentityAdminService,
      httpTransport(adminUrl, [adminClientInterceptor(io.env.PLATFORM_ADMIN_SECRET || DEFAULT_ADMIN_SECRET)]),
    );
    return client;
  };

  const program = new Command("platform")
    .description(
      "Administer the Platform Integration API: API tokens, organizations, partner grants, the delegation audit, sandbox keys.",
    )
    .option(
      "--admin-url <url>",
      "admin plane address (env PLATFORM_ADMIN_URL, else the port after PLATFORM_URL's)",
      adminUrl,
    )
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", EXAMPLES)
    .hook("preAction", (cmd) => {
      adminUrl = String(cmd.opts().adminUrl).replace(/\/$/, "");
    });

  const deps: AdminCommandDeps = { admin, adminUrl: () => adminUrl, env: io.env, now, out, json, stderr: io.stderr };
  // In this order in --help.
  registerTokenCommands(program, deps);
  registerOrgCommands(program, deps);
  registerSandboxCommands(program, deps);

  // The public API with an API key: listen and trigger.
  registerEventCommands(program, {
    env: io.env,
    stdout: io.stdout,
    stderr: io.stderr,
    now,
    ...(io.signal ? { signal: io.signal } : {}),
    ...(io.connectAttempts ? { connectAttempts: io.connectAttempts } : {}),
  });
  registerDeliveriesCommands(program, { env: io.env, stdout: io.stdout, stderr: io.stderr, now });
  registerRequestCommands(program, { env: io.env, stdout: io.stdout, stderr: io.stderr, now });

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
