/**
 * npm run bench -- --suite events — the event pipeline at line rate, on the machine's real
 * Postgres and a Kafka broker (KAFKA_PORT, default 19092; started with scripts/kafka.sh when it
 * is not running, and then stopped at the end), every service a process of its own:
 *
 *   drain     a backlog of pending webhook attempts sent by the real delivery process to local
 *             receivers: one endpoint with its cap at 32, then 20 endpoints; drain rate, the
 *             attempts persisted as succeeded, the process's CPU, and every receiver got only its
 *             own org's events
 *   relay     commit → Kafka: outbox rows committed at a fixed rate (open loop), the kit's relay
 *             publishing, a consumer timing their arrival
 *   idle      CPU of the webhooks API and delivery processes doing nothing (their relays)
 *   restart   a delivery worker stopped (SIGTERM, then kill -9) and started again while events
 *             keep coming: time from its start to its first delivery
 *   latency   API response → receiver: PATCH /deals through the gateway at 100/s (open loop,
 *             latency from the scheduled send time), the deal.updated webhook timed at the receiver
 *   fanout    fan-out catch-up: a backlog of deal events (--backlog, 20,000 over 20 orgs) on the
 *             revenue topic, then a delivery process started to log them all in the event log;
 *             rate and CPU per event of the process and its Postgres backends (not in the default
 *             phases)
 *   stopped   the stopped-worker backlog: --stopped-events (400) deal events of one org with
 *             --subscriptions (9) subscriptions published while the delivery worker is stopped,
 *             then the worker started again (a static member, as the stack runs it): rate from
 *             its start to the last delivery (fan-out and delivery), CPU per delivery of the
 *             process and its Postgres backends; stopped9 spreads the subscriptions over one
 *             endpoint each, stopped1 points them all at one endpoint (its cap, --cap)
 *   analytics ingestion rate on Postgres (--events, default 1,000,000) and the buyer-signals
 *             summary's database time for an org with --small (10,000) events beside that one
 *
 * Receivers are plain http on 127.0.0.1, which the delivery refuses unless
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS=true (the documented development setting), set here for the
 * processes it starts. Ports: --port-base (default 37000) up to +299. Databases are named
 * <--db-prefix>bench_* and dropped at the end. `--cpu-prof DIR` profiles every process it starts.
 *
 *   npm run bench -- --suite events [--phases drain,relay,idle,restart,latency,analytics,fanout,stopped]
 *     [--attempts 10000] [--backlog 20000] [--stopped-events 400] [--subscriptions 9] [--rate 100] [--seconds 15] [--cap 32] [--caps20 8] [--concurrency 128]
 *     [--port-base 37000] [--db-prefix pipe_] [--events 1000000] [--small 10000] [--drain-timeout 180]
 *   (drain1 and drain20 pick one of the two drains)
 */

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { TOPICS } from "@platform/kit/events";
import { analytics } from "./bench-events/analytics.js";
import { stoppedBacklog } from "./bench-events/backlog.js";
import {
  dropDatabases,
  KAFKA_BROKERS,
  PROCESS_NODE_VERSION,
  phases,
  procs,
  report,
  results,
  run,
  startGroupAtEnd,
  values,
} from "./bench-events/context.js";
import { drain, fanOutCatchUp, idleCpu, restart } from "./bench-events/delivery.js";
import { apiLatency } from "./bench-events/latency.js";
import { relayLatency } from "./bench-events/relay.js";
import { loadAverage } from "./bench-support.js";

// ---------------------------------------------------------------- main

/**
 * The broker of `scripts/kafka.sh` (on KAFKA_PORT), started when it is not running and stopped
 * at the end only then (the script's `--mark` / `--if-marked`, as `npm run stack` and CI use it).
 * With KAFKA_BROKERS set the bench uses that broker as it is.
 */
const kafkaMark = join(mkdtempSync(join(tmpdir(), "bench-events-")), "kafka.started");
function kafkaScript(...args: string[]): boolean {
  return spawnSync("bash", ["scripts/kafka.sh", ...args], { stdio: ["ignore", "inherit", "inherit"] }).status === 0;
}
const ownKafka = process.env.KAFKA_BROKERS === undefined;
if (ownKafka && !kafkaScript("start", "--mark", kafkaMark)) {
  console.error("could not start Kafka (bash scripts/kafka.sh start); see its output above");
  process.exit(1);
}

report(
  `processes on node ${PROCESS_NODE_VERSION}, the bench on ${process.version}, Kafka ${KAFKA_BROKERS}, load average at start ${loadAverage()}`,
);
try {
  await startGroupAtEnd(`bench-events-${run}`, [TOPICS.scheduling, TOPICS.revenue]);
  if (phases.has("drain") || phases.has("drain1")) await drain(1, Number(values.cap));
  if (phases.has("drain") || phases.has("drain20")) await drain(20, Number(values.caps20));
  if (phases.has("relay")) await relayLatency();
  if (phases.has("idle")) await idleCpu();
  if (phases.has("restart")) await restart();
  if (phases.has("latency")) await apiLatency();
  if (phases.has("analytics")) await analytics();
  if (phases.has("fanout")) await fanOutCatchUp();
  if (phases.has("stopped") || phases.has("stopped9")) await stoppedBacklog("spread");
  if (phases.has("stopped") || phases.has("stopped1")) await stoppedBacklog("one-endpoint");
} catch (err) {
  for (const proc of procs)
    process.stderr.write(`--- ${proc.name} (exit ${proc.child.exitCode}):\n${proc.log().slice(-3000)}\n`);
  throw err;
} finally {
  for (const proc of [...procs]) await proc.stop();
  await dropDatabases();
  if (ownKafka) kafkaScript("stop", "--if-marked", kafkaMark);
  rmSync(dirname(kafkaMark), { recursive: true, force: true });
}
report(`load average at end ${loadAverage()}`);
console.log(`\n${results.map((r) => `- ${r}`).join("\n")}\n`);
