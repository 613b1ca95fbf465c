import type { OffsetsByTopicPartition } from "kafkajs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { COMMIT_INTERVAL_MS, type OffsetCommitter, offsetCommits } from "../src/kafka-offset-commits.js";

/** A consumer group's offsets as kafkajs keeps them: resolved by handlers, committed by us. */
function group() {
  let resolved = -1;
  let committed = -1;
  const commits: number[] = [];
  const committer: OffsetCommitter = {
    uncommittedOffsets: (): OffsetsByTopicPartition => ({
      topics: resolved === committed ? [] : [{ topic: "t", partitions: [{ partition: 0, offset: String(resolved) }] }],
    }),
    commitOffsetsIfNecessary: async (offsets) => {
      const offset = Number(offsets?.topics[0]?.partitions[0]?.offset);
      commits.push(offset);
      committed = offset;
    },
  };
  return {
    committer,
    commits,
    resolve(offset: number) {
      resolved = offset;
    },
  };
}

/** A cadence that committed a first batch (1) at once and holds a second (2) for the interval. */
async function twoBatches(onTimerError: (err: unknown) => void = () => {}) {
  const g = group();
  const commits = offsetCommits(onTimerError);
  g.resolve(1);
  await commits.handled(g.committer);
  g.resolve(2);
  await commits.handled(g.committer);
  return { g, commits };
}

describe("offsetCommits: the consumer's commit cadence", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("commits the first batch at once, then at most once an interval, the last one when the interval ends", async () => {
    const g = group();
    const commits = offsetCommits(() => {});
    g.resolve(1);
    await commits.handled(g.committer);
    expect(g.commits).toEqual([1]);
    // Batches within the interval wait for it: one commit covers them all.
    for (const offset of [2, 3, 4]) {
      await vi.advanceTimersByTimeAsync(100);
      g.resolve(offset);
      await commits.handled(g.committer);
    }
    expect(g.commits).toEqual([1]);
    await vi.advanceTimersByTimeAsync(COMMIT_INTERVAL_MS - 300);
    expect(g.commits).toEqual([1, 4]);
    // Idle: nothing new, no commit.
    await vi.advanceTimersByTimeAsync(5 * COMMIT_INTERVAL_MS);
    expect(g.commits).toEqual([1, 4]);
    // After a quiet interval the next batch commits at once again.
    g.resolve(5);
    await commits.handled(g.committer);
    expect(g.commits).toEqual([1, 4, 5]);
  });

  it("flush commits what was resolved now, and the pending timer commits nothing more", async () => {
    const { g, commits } = await twoBatches();
    expect(g.commits).toEqual([1]);
    g.resolve(3);
    await commits.flush();
    expect(g.commits).toEqual([1, 3]);
    await vi.advanceTimersByTimeAsync(2 * COMMIT_INTERVAL_MS);
    expect(g.commits).toEqual([1, 3]);
  });

  it("flush with a batch uses that batch's group (a failure in the very first batch)", async () => {
    const g = group();
    const commits = offsetCommits(() => {});
    g.resolve(7);
    await commits.flush(g.committer);
    expect(g.commits).toEqual([7]);
  });

  it("a commit on the timer that fails is reported, and the next batch commits again", async () => {
    const g = group();
    const errors: unknown[] = [];
    const commits = offsetCommits((err) => errors.push(err));
    g.resolve(1);
    await commits.handled(g.committer);
    const failing: OffsetCommitter = {
      uncommittedOffsets: g.committer.uncommittedOffsets,
      commitOffsetsIfNecessary: async () => {
        throw new Error("The group is rebalancing");
      },
    };
    g.resolve(2);
    await commits.handled(failing);
    await vi.advanceTimersByTimeAsync(COMMIT_INTERVAL_MS);
    expect(errors).toHaveLength(1);
    g.resolve(3);
    await vi.advanceTimersByTimeAsync(COMMIT_INTERVAL_MS);
    await commits.handled(g.committer);
    expect(g.commits).toEqual([1, 3]);
  });

  it("stop drops the pending commit", async () => {
    const { g, commits } = await twoBatches();
    commits.stop();
    await vi.advanceTimersByTimeAsync(2 * COMMIT_INTERVAL_MS);
    expect(g.commits).toEqual([1]);
  });
});
