import {
  AccountService,
  ContactService,
  CrmAdminService,
  ReferenceService,
  TranscriptService,
} from "@platform/contracts/crm";
import type { Routes } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import { type MigrationSource, migrationsBeside } from "@platform/kit/migrate";
import type { ServiceDeps } from "@platform/kit/service-runtime";
import { accountHandlers } from "./handlers/account.handler.js";
import { adminHandlers } from "./handlers/admin.handler.js";
import { contactHandlers } from "./handlers/contact.handler.js";
import { referenceHandlers } from "./handlers/reference.handler.js";
import { transcriptHandlers } from "./handlers/transcript.handler.js";
import { pgStore } from "./store/index.js";

export { ACTIVITY_GROUP, startCrmConsumers } from "./events/subscriptions.js";
export { CRM_SANDBOX, seedCrmSandbox } from "./sandbox.js";

/** The service's schema: every table is `crm.<table>`. */
export const CRM_SCHEMA = "crm";

/** The service's own migrations, applied after the kit's (outbox, idempotency, processed events). */
export const crmMigrations: MigrationSource = migrationsBeside("crm", import.meta.url);

export type CrmDeps = ServiceDeps;

/**
 * The crm-data service's Connect routes (behind the trust interceptor) and its ingestion
 * plane (`adminRoutes`, behind the admin secret).
 */
export function build(deps: CrmDeps): { routes: Routes; adminRoutes: Routes } {
  const store = pgStore(deps.db);
  const reads = { store, clock: deps.clock, cursors: createCursorCodec(deps.cursorSecret) };
  return {
    routes: (router) => {
      router.service(AccountService, accountHandlers(reads));
      router.service(ContactService, contactHandlers(reads));
      router.service(TranscriptService, transcriptHandlers(reads));
      router.service(ReferenceService, referenceHandlers(reads));
    },
    adminRoutes: (router) => {
      router.service(CrmAdminService, adminHandlers(reads));
    },
  };
}
