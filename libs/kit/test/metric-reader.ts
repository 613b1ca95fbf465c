import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";

/** A metric reader a test collects when it wants. */
export class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/**
 * A TestReader on a meter provider registered as the API's global one. The unit suite shares
 * modules between files (isolate: false), so a provider another file left registered is
 * unregistered first: it would refuse this one. Call `metrics.disable()` when done.
 */
export function globalTestReader(): TestReader {
  const reader = new TestReader();
  metrics.disable();
  if (!metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))) {
    throw new Error("the global meter provider could not be registered");
  }
  return reader;
}

/** Short-lived garbage, as requests make, `rounds` times with a turn of the event loop between: young-generation collections follow. */
export async function makeGarbage(rounds: number): Promise<number> {
  let kept = 0;
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < 200_000; i++) kept += { n: i, s: `x${i}` }.s.length;
    // PerformanceObserver delivers its entries on a later turn.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return kept;
}
