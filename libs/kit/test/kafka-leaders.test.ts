import type { Admin } from "kafkajs";
import { describe, expect, it } from "vitest";
import { leadersElected } from "../src/kafka-bus.js";

type Metadata = Awaited<ReturnType<Admin["fetchTopicMetadata"]>>;

/** An admin whose metadata answers are `answers` in turn (an Error is thrown), the last repeated. */
function adminAnswering(answers: (Metadata | Error)[]): { admin: Admin; calls: () => number } {
  let calls = 0;
  const admin = {
    fetchTopicMetadata: async () => {
      const answer = answers[Math.min(calls++, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as unknown as Admin;
  return { admin, calls: () => calls };
}

const topic = (name: string, leaders: number[]) => ({
  name,
  partitions: leaders.map((leader, partitionId) => ({
    partitionId,
    leader,
    partitionErrorCode: 0,
    replicas: [1],
    isr: [1],
    offlineReplicas: [],
  })),
});

describe("waiting for the leaders of topics another process just created", () => {
  it("waits through unknown topics and partitions without a leader, and returns once every one has one", async () => {
    const { admin, calls } = adminAnswering([
      new Error("This server does not host this topic-partition"),
      { topics: [topic("a", [-1, -1]), topic("b", [])] },
      { topics: [topic("a", [1, -1]), topic("b", [1])] },
      { topics: [topic("a", [1, 1]), topic("b", [1])] },
    ]);
    await leadersElected(admin, ["a", "b"]);
    expect(calls()).toBe(4);
  });

  it("returns at once when the leaders are there", async () => {
    const { admin, calls } = adminAnswering([{ topics: [topic("a", [1])] }]);
    await leadersElected(admin, ["a"]);
    expect(calls()).toBe(1);
  });
});
