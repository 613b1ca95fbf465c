/**
 * The processes of `npm run stack`, in start order (the gateway last), as the bench suites that
 * drive a stack name them. A module of its own, free of side effects: the distributed suite's
 * stack module parses that suite's flags when imported, so another suite cannot import it.
 */
export const PROCESSES = [
  "identity",
  "scheduling",
  "crm-data",
  "revenue",
  "analytics",
  "webhooks",
  "webhooks-delivery",
  "request-logs",
  "gateway",
];
