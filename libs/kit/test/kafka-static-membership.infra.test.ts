import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { ConsumedMessage } from "../src/bus.js";
import { KafkaBus } from "../src/kafka-bus.js";
import { eventually } from "./helpers.js";

// Real Kafka: `bash scripts/kafka.sh start` runs the default broker beforehand.
const BROKERS = process.env.KAFKA_BROKERS ?? "127.0.0.1:19092";
const MEMBER = fileURLToPath(new URL("./fixtures/kafka-member.ts", import.meta.url));
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const runId = randomBytes(4).toString("hex");
/** KafkaBus's session timeout: how long a dynamic group waits for a member that died. */
const SESSION_TIMEOUT_MS = 10_000;

const children: ChildProcess[] = [];
const buses: KafkaBus[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all(buses.map((b) => b.close()));
});

/** Starts a member in a process of its own and resolves once it has joined its group. */
async function startMember(groupId: string, topic: string, instanceId?: string): Promise<ChildProcess> {
  const args = ["--import", "tsx", MEMBER, BROKERS, groupId, topic, ...(instanceId ? [instanceId] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (d) => {
      output += d;
      if (output.includes("joined")) resolve();
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    child.once("exit", (code) => reject(new Error(`member exited with ${code}:\n${output}`)));
  });
  return child;
}

describe("static group membership (KAFKA_GROUP_INSTANCE_ID)", () => {
  it("a member restarted after kill -9 takes the dead member's place at once and consumes what was published meanwhile", async () => {
    const groupId = `kit-static-${runId}`;
    const topic = `kit-static-${runId}`;
    const instanceId = `kit-static-member-${runId}`;
    const first = await startMember(groupId, topic, instanceId);
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));

    const publisher = new KafkaBus({ brokers: BROKERS.split(","), clientId: `kit-static-pub-${runId}`, logger });
    buses.push(publisher);
    await publisher.publish(topic, [{ key: "k", value: Buffer.from("after the crash"), headers: {} }]);

    const received: ConsumedMessage[] = [];
    const restarted = new KafkaBus({
      brokers: BROKERS.split(","),
      clientId: `kit-static-${runId}`,
      logger,
      groupInstanceId: instanceId,
    });
    buses.push(restarted);
    const joining = Date.now();
    await restarted.subscribe({
      groupId,
      topics: [topic],
      fromBeginning: true,
      handler: async (m) => {
        received.push(m);
      },
    });
    await eventually("the message published after the crash", () => received[0]);
    // A dynamic member would first wait out the dead member's session (the group's rebalance
    // cannot finish before it expires); the static one replaced it without a rebalance.
    expect(Date.now() - joining).toBeLessThan(SESSION_TIMEOUT_MS);
    expect(received[0]?.value.toString()).toBe("after the crash");
  });

  it("without an instance id, the restarted member waits for the dead one's session to expire", async () => {
    const groupId = `kit-dynamic-${runId}`;
    const topic = `kit-dynamic-${runId}`;
    const first = await startMember(groupId, topic);
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    const restarted = new KafkaBus({ brokers: BROKERS.split(","), clientId: `kit-dynamic-${runId}`, logger });
    buses.push(restarted);
    const joining = Date.now();
    await restarted.subscribe({ groupId, topics: [topic], fromBeginning: true, handler: async () => {} });
    // The contrast that shows the first test measures membership, not a fast machine.
    expect(Date.now() - joining).toBeGreaterThanOrEqual(SESSION_TIMEOUT_MS - 2_000);
  });
});
