// The distributed runtime's entry point: `node --import tsx services/scheduling/src/main.ts`.
import { startTelemetry, stopTelemetry } from "@platform/kit/telemetry";

// Telemetry first, so what loads after it can be instrumented.
startTelemetry("scheduling");

const { loadSchedulingConfig } = await import("./config.js");
const { start } = await import("./start.js");

try {
  const running = await start(loadSchedulingConfig());
  if (!running) {
    await stopTelemetry();
    process.exit(0);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`scheduling: ${signal} received, stopping\n`);
    await running.stop();
    await stopTelemetry();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
} catch (err) {
  process.stderr.write(`scheduling: failed to start: ${(err as Error).message}\n`);
  process.exit(1);
}
