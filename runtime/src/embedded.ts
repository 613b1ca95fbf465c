import { startTelemetry } from "@platform/kit/telemetry";

// Telemetry first, so instrumentation sees every module that loads after it.
startTelemetry("platform", { httpServerSpans: true });

const { mkdirSync, writeFileSync } = await import("node:fs");
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

const config = loadConfigOrExit(embeddedConfigSpec);
const gatewayConfig = loadConfigOrExit(gatewayConfigSpec);

const logger = createLogger("platform", config.LOG_LEVEL);
const dataDir = resolve(config.PLATFORM_DATA_DIR);
mkdirSync(dataDir, { recursive: true });
logger.info({ dataDir }, "starting the embedded platform");

/** A start failure the user can fix (data directory in use, port taken): one line, no stack trace. */
function exitIfExplained(err: unknown): void {
  const line = startErrorLine(err, config);
  if (line === undefined) return;
  console.error(line);
  process.exit(1);
}

const platform = await createEmbeddedPlatform({
  dataDir,
  logger,
  gateway: { ...gatewayConfig, PORT: config.PORT, HOST: config.HOST, BODY_LIMIT_BYTES: config.BODY_LIMIT_BYTES },
  sandboxSeed: config.SANDBOX_SEED,
  seedSandbox: config.SANDBOX_ENABLED,
  adminSecret: config.PLATFORM_ADMIN_SECRET,
  adminPort: config.ADMIN_PORT === 0 ? undefined : config.ADMIN_PORT,
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
if (config.SANDBOX_ENABLED) {
  writeFileSync(keysFile, `${JSON.stringify(await platform.sandboxKeys(), null, 2)}\n`, { mode: 0o600 });
}

let address: string;
try {
  address = await platform.app.listen({ port: config.PORT, host: config.HOST });
} catch (err) {
  await platform.close();
  exitIfExplained(err);
  throw err;
}
const adminUrl = platform.admin ? `http://${config.HOST}:${platform.admin.port}` : undefined;
const lines = [
  "",
  `Platform Integration API (embedded) listening on ${address}/api/v1alpha1`,
  `  API docs:        ${address}/docs`,
  `  OpenAPI:         ${address}/api/v1alpha1/openapi.json`,
  adminUrl
    ? `  Admin plane:     ${adminUrl} (npx platform --help${adminUrl === "http://127.0.0.1:8081" ? "" : `; set PLATFORM_ADMIN_URL=${adminUrl} for the CLI`})`
    : "",
  config.SANDBOX_ENABLED
    ? `  Sandbox keys:    ${keysFile}${platform.seeded ? " (sandbox seeded on this first start)" : ""}  — or: npx platform sandbox keys`
    : "",
  `  Data:            ${dataDir} (kept across restarts; one process at a time)`,
  "  Other ports:     PORT=8090 ADMIN_PORT=8091 npm start, then PLATFORM_ADMIN_URL=http://127.0.0.1:8091 for the CLI",
  "",
].filter((l) => l !== "");
process.stdout.write(`${lines.join("\n")}\n\n`);

exitOnSignals({
  name: "platform",
  drainTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  async stop(signal) {
    logger.info({ signal }, "shutting down");
    await platform.close();
  },
});
