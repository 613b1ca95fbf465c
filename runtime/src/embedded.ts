import { startTelemetry } from "@platform/kit/telemetry";

// Telemetry first, so instrumentation sees every module that loads after it.
await startTelemetry("platform");

const { mkdirSync } = await import("node:fs");
const { join, resolve } = await import("node:path");
const { loadConfigOrExit } = await import("@platform/kit/load-config-or-exit");
const { createLogger } = await import("@platform/kit/logger");
const { exitOnSignals, ignoreBrokenPipes } = await import("@platform/kit/shutdown");

// A closed stdout (the reader of a pipe went away) must not crash or wedge the platform.
ignoreBrokenPipes();
const { gatewayConfigSpec } = await import("@platform/gateway/config");
const { embeddedConfigSpec } = await import("./config.js");
const { createEmbeddedPlatform } = await import("./platform.js");
const { startErrorLine } = await import("./start-errors.js");
const { checkPortsFree } = await import("./ports.js");
const { bannerLines, defaultAdminPort } = await import("./banner.js");
const { writeKeysFile } = await import("./keys-file.js");

const config = loadConfigOrExit(embeddedConfigSpec);
const gatewayConfig = loadConfigOrExit(gatewayConfigSpec);

const logger = createLogger("platform", config.LOG_LEVEL);
const adminPort = config.ADMIN_PORT ?? defaultAdminPort(config.PORT);
const settings = { HOST: config.HOST, PORT: config.PORT, ADMIN_PORT: adminPort };
const dataDir = resolve(config.PLATFORM_DATA_DIR);

/** A start failure the user can fix (data directory in use, port taken): one line, no stack trace. */
function exitIfExplained(err: unknown): void {
  const line = startErrorLine(err, settings);
  if (line === undefined) return;
  console.error(line);
  process.exit(1);
}

// Before the data directory exists: a start bound to fail on a port must not leave a seeded one.
await checkPortsFree(config.HOST, [
  { setting: "PORT", port: config.PORT },
  { setting: "ADMIN_PORT", port: adminPort },
]).catch((err: unknown) => {
  exitIfExplained(err);
  throw err;
});
mkdirSync(dataDir, { recursive: true });
logger.info({ dataDir }, "starting the embedded platform");

const platform = await createEmbeddedPlatform({
  dataDir,
  logger,
  gateway: { ...gatewayConfig, PORT: config.PORT, HOST: config.HOST, BODY_LIMIT_BYTES: config.BODY_LIMIT_BYTES },
  sandboxSeed: config.SANDBOX_SEED,
  seedSandbox: config.SANDBOX_ENABLED,
  adminSecret: config.PLATFORM_ADMIN_SECRET,
  adminPort: adminPort === 0 ? undefined : adminPort,
  adminHost: config.HOST,
  slotTokenSecret: config.SLOT_TOKEN_SECRET,
  bookingBaseUrl: config.BOOKING_BASE_URL,
  diskCheckIntervalMs: config.DISK_CHECK_INTERVAL_MS,
  onEngineFailure(failure) {
    // Synchronously, from inside the engine's failed write: nothing after this may use it.
    console.error(
      `platform: the embedded database cannot continue: writing ${failure.path} failed (${failure.code}); exiting. ` +
        "What was acknowledged before is kept; start again once the directory can be written.",
    );
    process.exit(1);
  },
}).catch((err: unknown) => {
  exitIfExplained(err);
  throw err;
});

const keysFile = join(dataDir, "sandbox-keys.json");
if (config.SANDBOX_ENABLED) writeKeysFile(keysFile, await platform.sandboxKeys());

let address: string;
try {
  address = await platform.app.listen({ port: config.PORT, host: config.HOST });
} catch (err) {
  await platform.close();
  exitIfExplained(err);
  throw err;
}
const banner = bannerLines({
  address,
  host: config.HOST,
  port: config.PORT,
  adminPort: platform.admin?.port,
  keysFile: config.SANDBOX_ENABLED ? keysFile : undefined,
  seeded: platform.seeded,
  dataDir,
});
process.stdout.write(`${banner.join("\n")}\n\n`);

exitOnSignals({
  name: "platform",
  drainTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  async stop(signal) {
    logger.info({ signal }, "shutting down");
    await platform.close();
  },
});
