import { createRequire } from "node:module";

/**
 * kafkajs 2.2.4 (its latest release) keeps a 0 ms timer loop alive on every broker connection
 * once a request has completed: `RequestQueue.scheduleCheckPendingRequests` schedules the next
 * check even with nothing pending, with a negative delay (tulios/kafkajs#1556, #1704; the fix,
 * #1667, is unmerged). Each idle process woke ~1,500 times a second and spent 40–60 ms of CPU
 * per second doing nothing. This applies that fix: a check is scheduled only while requests
 * wait, at the throttle's end or after 10 ms (kafkajs's own interval); a completed or timed-out
 * request checks the queue by itself, so nothing waits longer than before.
 *
 * kafkajs loads this same file (third-party packages are never bundled, see scripts/build.ts),
 * so patching the prototype here patches every connection it opens.
 */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

const require = createRequire(import.meta.url);
const RequestQueueClass = require("kafkajs/src/network/requestQueue/index.js") as { prototype: RequestQueue };

RequestQueueClass.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueue) {
  if (this.pending.length === 0 || this.throttleCheckTimeoutId) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS,
  );
};
