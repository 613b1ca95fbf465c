// The delivery worker's entry point: `node --import tsx services/webhooks/src/delivery-main.ts`.
import { startTelemetry } from "@platform/kit/telemetry";

// Telemetry first, so what loads after it can be instrumented.
startTelemetry("webhooks-delivery");

const { runUntilSignal } = await import("@platform/kit/service-runtime");
const { loadWebhooksConfig } = await import("./config.js");
const { startDeliveryProcess } = await import("./delivery-start.js");

await runUntilSignal("webhooks-delivery", () => startDeliveryProcess(loadWebhooksConfig()));
