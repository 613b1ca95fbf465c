import { constants, PerformanceObserver } from "node:perf_hooks";
import { metrics } from "@opentelemetry/api";

/**
 * Exports every garbage collection's pause as the histogram `v8js.gc.duration` (seconds) with
 * `v8js.gc.type` = minor, major, incremental or weakcb: OpenTelemetry's semantic convention
 * for V8, with the bucket bounds of its runtime-node instrumentation. Beside
 * `nodejs.eventloop.delay.max` it says whether a slow second was the collector's: the rate of
 * `v8js_gc_duration_seconds_sum` is the share of each second spent in GC.
 *
 * Kit observes it itself rather than through `@opentelemetry/instrumentation-runtime-node`,
 * which starts all of its collectors at once, among them a second event-loop monitor at 10 ms
 * under the name of kit's (event-loop.ts), whose wake-ups issue 51 measured. Returns a
 * function that stops observing; a second call shares the first observer.
 */
let active: (() => void) | undefined;

/** The runtime-node instrumentation's bounds (s): most scavenges fall in the first two. */
const GC_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
};

export function observeGc(): () => void {
  if (active) return active;
  const histogram = metrics.getMeter("@platform/kit/gc").createHistogram("v8js.gc.duration", {
    unit: "s",
    description: "Garbage collection pauses, by kind (minor, major, incremental, weakcb)",
    advice: { explicitBucketBoundaries: GC_DURATION_BUCKETS },
  });
  // One attribute set per kind, made once: a busy process collects dozens of times a second.
  const attributes = Object.fromEntries(Object.entries(KINDS).map(([kind, type]) => [kind, { "v8js.gc.type": type }]));
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // A "gc" entry's detail is a NodeGCPerformanceDetail (its `kind`), which the types leave out.
      const kind = (entry as { detail?: { kind?: number } | null }).detail?.kind;
      histogram.record(entry.duration / 1000, kind === undefined ? undefined : attributes[kind]);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  active = () => {
    observer.disconnect();
    active = undefined;
  };
  return active;
}
