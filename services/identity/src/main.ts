// The distributed runtime's entry point: `node --import tsx services/identity/src/main.ts`.
import { startTelemetry, stopTelemetry } from "@platform/kit/telemetry";

// Telemetry first, so what loads after it can be instrumented.
startTelemetry("identity");

const { loadIdentityConfig } = await import("./config.js");
const { start } = await import("./start.js");

try {
  const running = await start(loadIdentityConfig());
  if (!running) {
    await stopTelemetry();
    process.exit(0);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`identity: ${signal} received, stopping\n`);
    await running.stop();
    await stopTelemetry();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
} catch (err) {
  process.stderr.write(`identity: failed to start: ${(err as Error).message}\n`);
  process.exit(1);
}
