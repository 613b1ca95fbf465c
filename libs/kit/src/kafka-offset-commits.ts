import type { OffsetsByTopicPartition } from "kafkajs";

/**
 * How often a consumer commits the offsets of the messages it has handled. kafkajs's auto
 * commit sends an OffsetCommit after every batch, whatever `autoCommitInterval` says
 * (tulios/kafkajs#759): at a low rate every event is a batch of its own, so each event cost
 * each consumer group a commit, and the broker one write to `__consumer_offsets`. Committed on
 * a cadence instead, a crash (or a rebalance kafkajs gives no chance to commit before) makes the
 * group see at most this much of its handled messages again, which every consumer skips by
 * event id (`consumeOnce`).
 */
export const COMMIT_INTERVAL_MS = 1_000;

/** What a kafkajs `eachBatch` payload offers for committing: the batch's consumer group. */
export interface OffsetCommitter {
  uncommittedOffsets(): OffsetsByTopicPartition;
  commitOffsetsIfNecessary(offsets?: OffsetsByTopicPartition): Promise<void>;
}

export interface OffsetCommits {
  /**
   * A batch was handled (its offsets resolved): commits now when the last commit is
   * COMMIT_INTERVAL_MS old, else once it is, unless another batch or a flush comes first.
   */
  handled(batch: OffsetCommitter): Promise<void>;
  /**
   * Commits every resolved offset now (a handler failed, the group rebalances, the consumer
   * stops), through `batch`'s group when given, else the latest batch's.
   */
  flush(batch?: OffsetCommitter): Promise<void>;
  /** Drops the pending commit's timer (after the final flush). */
  stop(): void;
}

/** One consumer's commit cadence. Commits run one at a time, so offsets reach the broker in order. */
export function offsetCommits(onTimerError: (err: unknown) => void, intervalMs = COMMIT_INTERVAL_MS): OffsetCommits {
  // The latest batch's: after a rebalance or a restart kafkajs hands out a new one.
  let committer: OffsetCommitter | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastCommit = Number.NEGATIVE_INFINITY;
  let chain: Promise<void> = Promise.resolve();

  async function commit(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    const offsets = committer?.uncommittedOffsets();
    if (!committer || !offsets || offsets.topics.length === 0) return;
    lastCommit = Date.now();
    // With offsets given, kafkajs commits them whatever its own auto-commit settings say.
    await committer.commitOffsetsIfNecessary(offsets);
  }

  function flush(batch?: OffsetCommitter): Promise<void> {
    if (batch) committer = batch;
    const run = chain.then(commit);
    chain = run.catch(() => {});
    return run;
  }

  return {
    handled(batch) {
      committer = batch;
      const wait = lastCommit + intervalMs - Date.now();
      if (wait <= 0) return flush();
      if (!timer) {
        timer = setTimeout(() => flush().catch(onTimerError), wait);
        // A pending commit alone must not keep a process alive that is otherwise done.
        timer.unref();
      }
      return Promise.resolve();
    },
    flush,
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
