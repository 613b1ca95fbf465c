/** The webhook event catalog, put in by the build from @platform/contracts/webhooks (scripts/build-console.ts). */
declare const __EVENT_CATALOG__: readonly string[];
