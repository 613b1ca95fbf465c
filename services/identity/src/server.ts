import {
  GatewayAuthService,
  IdentityAdminService,
  OrganizationService,
  PartnerService,
  UserService,
} from "@platform/contracts/identity";
import type { Routes } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import type { Logger } from "@platform/kit/logger";
import { type MigrationSource, migrationsBeside } from "@platform/kit/migrate";
import type { ServiceDeps } from "@platform/kit/service-runtime";
import { ORGANIZATION_CACHE_MS, organizationCache } from "./application/organization-cache.js";
import { adminHandlers } from "./handlers/admin.handler.js";
import { gatewayAuthHandlers } from "./handlers/gateway-auth.handler.js";
import { organizationHandlers } from "./handlers/organization.handler.js";
import { partnerHandlers } from "./handlers/partner.handler.js";
import { userHandlers } from "./handlers/user.handler.js";
import { pgStore, type Store } from "./store/index.js";

export { type InvitationEmail, type InvitationMailer, logMailer } from "./application/mailer.js";
export { startIdentityConsumers } from "./events/subscriptions.js";
export { sandboxKeys, seedSandbox } from "./sandbox.js";

/** The service's schema: every table is `identity.<table>`. */
export const IDENTITY_SCHEMA = "identity";

/** The service's own migrations, applied after the kit's (outbox, idempotency). */
export const identityMigrations: MigrationSource = migrationsBeside("identity", import.meta.url);

export interface IdentityDeps extends ServiceDeps {
  logger: Logger;
  /** Seed of the sandbox, to derive its keys for ListSandboxKeys. */
  sandboxSeed: string;
  /** Called after each committed write (the tests count writes with it; outbox rows wake the relay by themselves). */
  onCommit?: () => void;
  /** How long a read organization is reused (organization-cache.ts); 0 reads it every time. */
  organizationCacheMs?: number;
}

/**
 * The identity service's Connect routes: `routes` for the gateway (behind the trust
 * interceptor) and `adminRoutes` for the admin plane (behind the admin secret).
 */
export function build(deps: IdentityDeps): { routes: Routes; adminRoutes: Routes } {
  const db = pgStore(deps.db);
  const organizations = organizationCache(db, deps.clock, deps.organizationCacheMs ?? ORGANIZATION_CACHE_MS);
  const store: Store = { ...db, findOrganization: organizations.findOrganization };
  const committed = () => {
    organizations.clear();
    deps.onCommit?.();
  };
  const write: Store["tx"] = async (fn) => {
    const result = await store.tx(fn);
    committed();
    return result;
  };
  const api = {
    db: deps.db,
    store,
    clock: deps.clock,
    cursors: createCursorCodec(deps.cursorSecret),
    committed,
  };
  return {
    routes: (router) => {
      router.service(OrganizationService, organizationHandlers(api));
      router.service(UserService, userHandlers(api));
      router.service(PartnerService, partnerHandlers(api));
      router.service(GatewayAuthService, gatewayAuthHandlers(store));
    },
    adminRoutes: (router) => {
      router.service(IdentityAdminService, adminHandlers({ ...deps, store, write }));
    },
  };
}
