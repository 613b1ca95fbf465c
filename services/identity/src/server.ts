import { fileURLToPath } from "node:url";
import { GatewayAuthService, IdentityAdminService, OrganizationService } from "@platform/contracts/identity";
import type { Clock } from "@platform/kit/clock";
import type { Routes } from "@platform/kit/connect";
import type { Db } from "@platform/kit/db";
import type { Logger } from "@platform/kit/logger";
import type { MigrationSource } from "@platform/kit/migrate";
import { adminHandlers } from "./admin.handler.js";
import { gatewayAuthHandlers } from "./gateway-auth.handler.js";
import { organizationHandlers } from "./organization.handler.js";
import { type IdentityStore, pgIdentityStore } from "./store/identity.store.js";

export { SANDBOX, type SandboxKeyInfo, sandboxKeys, sandboxKeysOffline, seedSandbox } from "./sandbox.js";

/** The service's schema: every table is `identity.<table>`. */
export const IDENTITY_SCHEMA = "identity";

/** The service's own migrations, applied after the kit's (outbox, idempotency). */
export const identityMigrations: MigrationSource = {
  name: "identity",
  dir: fileURLToPath(new URL("../migrations", import.meta.url)),
};

export interface IdentityDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** Seed of the sandbox, to derive its keys for ListSandboxKeys. */
  sandboxSeed: string;
  /** Called after each committed write, so the outbox relay publishes at once instead of at its next poll. */
  onCommit?: () => void;
}

/**
 * The identity service's Connect routes: `routes` for the gateway (behind the trust
 * interceptor) and `adminRoutes` for the admin plane (behind the admin secret).
 */
export function build(deps: IdentityDeps): { routes: Routes; adminRoutes: Routes } {
  const store = pgIdentityStore(deps.db);
  const write: IdentityStore["tx"] = async (fn) => {
    const result = await store.tx(fn);
    deps.onCommit?.();
    return result;
  };
  return {
    routes: (router) => {
      router.service(OrganizationService, organizationHandlers(store, deps.clock));
      router.service(GatewayAuthService, gatewayAuthHandlers(store));
    },
    adminRoutes: (router) => {
      router.service(IdentityAdminService, adminHandlers({ ...deps, store, write }));
    },
  };
}
