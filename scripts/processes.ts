// The processes of the distributed runtime and their entry points: what `npm run build` bundles
// (scripts/build.ts) and what the benches start from dist/.

/** Process name → entry point. The images run `node dist/<process>/main.js`. */
export const PROCESSES: Record<string, string> = {
  gateway: "gateway/src/main.ts",
  identity: "services/identity/src/main.ts",
  scheduling: "services/scheduling/src/main.ts",
  "crm-data": "services/crm-data/src/main.ts",
  revenue: "services/revenue/src/main.ts",
  analytics: "services/analytics/src/main.ts",
  webhooks: "services/webhooks/src/main.ts",
  "webhooks-delivery": "services/webhooks/src/delivery-main.ts",
  // `npm start`'s embedded platform, for running it without tsx.
  embedded: "runtime/src/embedded.ts",
};
