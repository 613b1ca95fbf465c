import { DealService, InsightService, QnaService, RevenueAdminService } from "@platform/contracts/revenue";
import type { Routes } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import type { Logger } from "@platform/kit/logger";
import { type MigrationSource, migrationsBeside } from "@platform/kit/migrate";
import type { ServiceDeps } from "@platform/kit/service-runtime";
import { projectedCrm, projectedDirectory } from "./application/projected-references.js";
import type { CrmReferences, Directory } from "./application/references.js";
import { adminHandlers } from "./handlers/admin.handler.js";
import { dealHandlers } from "./handlers/deal.handler.js";
import { insightHandlers } from "./handlers/insight.handler.js";
import { qnaHandlers } from "./handlers/qna.handler.js";
import { pgStore } from "./store/index.js";

export { type CrmReferences, crmReferences, type Directory, identityDirectory } from "./application/references.js";
export { startRevenueConsumers } from "./events/subscriptions.js";
export * from "./sandbox.js";

/** The service's schema: every table is `revenue.<table>`. */
export const REVENUE_SCHEMA = "revenue";

/** The service's own migrations, applied after the kit's (outbox, idempotency, processed events). */
export const revenueMigrations: MigrationSource = migrationsBeside("revenue", import.meta.url);

export interface RevenueDeps extends ServiceDeps {
  logger: Logger;
  /** crm-data's ReferenceService, called with the caller's context. */
  crm: CrmReferences;
  /** identity's users, for deal owners. */
  directory: Directory;
  /** Called after each committed write (the tests count writes with it; outbox rows wake the relay by themselves). */
  onCommit?: () => void;
}

/** The revenue service's Connect routes (behind the trust interceptor) and its admin plane (behind the admin secret). */
export function build(deps: RevenueDeps): { routes: Routes; adminRoutes: Routes } {
  const store = pgStore(deps.db);
  // Writes find what they reference in revenue's own projections; crm and directory are the
  // owners, asked only for ids the projections have not seen.
  const crm = projectedCrm(deps.db, deps.crm, deps.clock);
  const shared = { db: deps.db, store, clock: deps.clock, committed: () => deps.onCommit?.() };
  const deals = dealHandlers({
    ...shared,
    cursors: createCursorCodec(deps.cursorSecret),
    crm,
    directory: projectedDirectory(deps.db, deps.directory, deps.clock),
  });
  const qnas = qnaHandlers({ ...shared, crm });
  const insights = insightHandlers(shared);
  return {
    routes: (router) => {
      router.service(DealService, deals);
      router.service(QnaService, qnas);
      router.service(InsightService, insights);
    },
    adminRoutes: (router) => {
      router.service(RevenueAdminService, adminHandlers({ store }));
    },
  };
}
