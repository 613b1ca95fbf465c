import { type Attributes, createNoopMeter, type HrTime, metrics, ValueType } from "@opentelemetry/api";
import {
  AggregationTemporality,
  type CollectionResult,
  DataPointType,
  type HistogramMetricData,
  type MetricProducer,
} from "@opentelemetry/sdk-metrics";

/**
 * Histograms recorded on every request (the gateway's http.server.request.duration, the RPC
 * duration histograms), whose label sets are bound once: a record is a bucket increment on a
 * series the caller looked up in its own map, instead of the SDK's path, which sorts and hashes
 * the attributes of every record to find its series (OpenTelemetry JS has no bound
 * instruments). That path was the largest part of what metrics cost the gateway per read
 * (docs/benchmarks/observability.md).
 *
 * The series reach the readers through `histogramProducer`, a MetricProducer (the SDK's way of
 * adding metrics it does not aggregate itself) that startTelemetry gives every reader it makes;
 * the exposition is the SDK's own explicit-bucket histogram, cumulative: the same
 * `…_bucket{le=…}`, `_sum` and `_count` series Prometheus scraped before.
 */

/** One label set's counts; `record` is all a request pays. */
export class HistogramSeries {
  readonly counts: number[];
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly boundaries: readonly number[],
    readonly attributes: Attributes,
    readonly startTime: HrTime,
  ) {
    this.counts = new Array<number>(boundaries.length + 1).fill(0);
  }

  /** As the SDK's explicit-bucket aggregation: bucket i holds (boundaries[i-1], boundaries[i]]; negatives and NaN are not recorded. */
  record(value: number): void {
    if (!(value >= 0)) return;
    const bounds = this.boundaries;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (this.counts[i] as number)++;
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }
}

export interface BoundHistogramOptions {
  description: string;
  unit: string;
  boundaries: readonly number[];
}

/** A histogram's series, each made once per label set. */
export class BoundHistogram {
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly scope: string,
    readonly name: string,
    readonly options: BoundHistogramOptions,
  ) {}

  /** The series of `attributes` (made on first use). Not for a request's path: callers keep what it returns. */
  seriesOf(attributes: Attributes): HistogramSeries {
    const key = JSON.stringify(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let series = this.series.get(key);
    if (!series) {
      series = new HistogramSeries(this.options.boundaries, { ...attributes }, hrNow());
      this.series.set(key, series);
    }
    return series;
  }

  data(endTime: HrTime): HistogramMetricData {
    return {
      descriptor: {
        name: this.name,
        description: this.options.description,
        unit: this.options.unit,
        valueType: ValueType.DOUBLE,
      },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: [...this.series.values()].map((s) => ({
        startTime: s.startTime,
        endTime,
        attributes: s.attributes,
        value: {
          buckets: { boundaries: [...this.options.boundaries], counts: [...s.counts] },
          count: s.count,
          sum: s.sum,
          min: s.min,
          max: s.max,
        },
      })),
    };
  }
}

function hrNow(): HrTime {
  const ms = Date.now();
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6];
}

const histograms: BoundHistogram[] = [];

/** What every metric reader of startTelemetry collects besides the SDK's own instruments. */
export const histogramProducer: MetricProducer = {
  async collect(): Promise<CollectionResult> {
    const endTime = hrNow();
    const byScope = new Map<string, HistogramMetricData[]>();
    for (const h of histograms) {
      const data = h.data(endTime);
      if (data.dataPoints.length === 0) continue;
      byScope.set(h.scope, [...(byScope.get(h.scope) ?? []), data]);
    }
    return {
      // The readers keep the SDK's resource and ignore a producer's.
      resourceMetrics: {
        resource: undefined as never,
        scopeMetrics: [...byScope].map(([name, list]) => ({ scope: { name }, metrics: list })),
      },
      errors: [],
    };
  },
};

/**
 * A bound histogram when a meter provider is registered (metrics are read), undefined when none
 * is: then the caller records nothing at all. Made where the SDK's histogram was made, after
 * startTelemetry. The same scope and name twice give the same histogram.
 */
export function boundHistogram(
  scope: string,
  name: string,
  options: BoundHistogramOptions,
): BoundHistogram | undefined {
  if (metrics.getMeter(scope) === createNoopMeter()) return undefined;
  const existing = histograms.find((h) => h.scope === scope && h.name === name);
  if (existing) return existing;
  const made = new BoundHistogram(scope, name, options);
  histograms.push(made);
  return made;
}

/** The SDK's default boundaries for a histogram without advice (made for milliseconds). */
export const DEFAULT_BOUNDARIES: readonly number[] = [
  0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000,
];
