// The distributed runtime's entry point: `node --import tsx services/analytics/src/main.ts`.
// First, before any work: no allocation-site pretenuring (libs/kit/src/v8-flags.ts says why).
import "@platform/kit/v8-flags";
import { startTelemetry } from "@platform/kit/telemetry";

// Telemetry first, so what loads after it can be instrumented.
await startTelemetry("analytics");

const { runUntilSignal } = await import("@platform/kit/service-runtime");
const { loadAnalyticsConfig } = await import("./config.js");
const { start } = await import("./start.js");

await runUntilSignal("analytics", () => start(loadAnalyticsConfig()));
