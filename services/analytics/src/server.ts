import { AnalyticsAdminService, BuyerSignalsService, EmailBlastService } from "@platform/contracts/analytics";
import type { Routes } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import type { Logger } from "@platform/kit/logger";
import { type MigrationSource, migrationsBeside } from "@platform/kit/migrate";
import type { ServiceDeps } from "@platform/kit/service-runtime";
import { type ContactResolver, noContacts } from "./application/contacts.js";
import { adminHandlers } from "./handlers/admin.handler.js";
import { buyerSignalsHandlers } from "./handlers/buyer-signals.handler.js";
import { emailBlastHandlers } from "./handlers/email-blasts.handler.js";
import { pgStore } from "./store/index.js";

export { type ContactResolver, crmContacts, noContacts } from "./application/contacts.js";
export { sentEmailId } from "./domain/delivery.js";
export { type EmailEvent, emailEventOf } from "./domain/email-event.js";
export { INGEST_GROUP, startAnalyticsConsumers } from "./events/subscriptions.js";
export { ANALYTICS_SANDBOX, seedAnalyticsSandbox } from "./sandbox.js";
// The benchmark reads the store directly (scripts/bench-analytics.ts).
export { txStore as analyticsReads } from "./store/index.js";
export { type IngestResult, ingestEvents } from "./store/ingest.store.js";
export { SENT_EMAIL_SORT_KEYS } from "./store/sent-email.store.js";

/** The service's schema: every table is `analytics.<table>`. */
export const ANALYTICS_SCHEMA = "analytics";

/** The service's own migrations, applied after the kit's (outbox, idempotency). */
export const analyticsMigrations: MigrationSource = migrationsBeside("analytics", import.meta.url);

export interface AnalyticsDeps extends ServiceDeps {
  logger: Logger;
  /** Resolves recipient emails to CRM contacts; none (contactId null) by default. */
  contacts?: ContactResolver;
}

/**
 * The analytics service's Connect routes: `routes` for the gateway (behind the trust
 * interceptor) and `adminRoutes` for the admin plane (behind the admin secret).
 */
export function build(deps: AnalyticsDeps): { routes: Routes; adminRoutes: Routes } {
  const store = pgStore(deps.db);
  const cursors = createCursorCodec(deps.cursorSecret);
  const shared = { reads: store, clock: deps.clock, cursors };
  return {
    routes: (router) => {
      router.service(BuyerSignalsService, buyerSignalsHandlers({ ...shared, contacts: deps.contacts ?? noContacts }));
      router.service(EmailBlastService, emailBlastHandlers(shared));
    },
    adminRoutes: (router) => {
      router.service(AnalyticsAdminService, adminHandlers({ store, clock: deps.clock, logger: deps.logger }));
    },
  };
}
