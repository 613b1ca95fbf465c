import { monitorEventLoopDelay } from "node:perf_hooks";
import { metrics } from "@opentelemetry/api";

/**
 * Exports how long the event loop was held up, as the gauge `nodejs.eventloop.delay.max`
 * (seconds): the longest delay `perf_hooks.monitorEventLoopDelay` saw since the previous
 * collection (each Prometheus scrape resets it, as prom-client's lag gauges do), so a
 * stall between two scrapes is never averaged away. A process with long CPU work (a large
 * availability search) shows here whether it keeps its consumers' heartbeats and other
 * requests waiting. Returns a function that stops the monitor. Every process with a metrics
 * reader observes it (startTelemetry); a second call shares the first monitor.
 */
let active: (() => void) | undefined;

/**
 * How often the monitor's timer samples the loop. Each sample wakes the loop: at 10 ms (Node's
 * default) an idle process spent 4.5 ms of CPU a second on it, at 20 ms 2.5 ms (issue 51 bounds
 * what telemetry may add to a read). A stall longer than this is still seen whole.
 */
const EVENT_LOOP_RESOLUTION_MS = 20;

export function observeEventLoopDelay(): () => void {
  if (active) return active;
  const histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  histogram.enable();
  const gauge = metrics.getMeter("@platform/kit/event-loop").createObservableGauge("nodejs.eventloop.delay.max", {
    unit: "s",
    description: "Longest event-loop delay since the previous collection",
  });
  const observe = (result: { observe(value: number): void }) => {
    // The histogram records the time between two of its timer's turns, so an idle loop's
    // samples are the resolution itself (20.1 ms here): the delay is what exceeds it.
    const delayNs = histogram.count > 0 ? histogram.max - EVENT_LOOP_RESOLUTION_MS * 1e6 : 0;
    result.observe(Math.max(0, delayNs) / 1e9);
    histogram.reset();
  };
  gauge.addCallback(observe);
  active = () => {
    gauge.removeCallback(observe);
    histogram.disable();
    active = undefined;
  };
  return active;
}
