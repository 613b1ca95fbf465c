import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { GatewayAuthService, IdentityAdminService, OrganizationService } from "@platform/contracts/identity";
import { type Clock, ManualClock } from "@platform/kit/clock";
import {
  adminClientInterceptor,
  adminSecretInterceptor,
  errorInterceptor,
  inProcessTransport,
  type Routes,
  signingInterceptor,
  trustInterceptor,
} from "@platform/kit/connect";
import type { RequestContext } from "@platform/kit/context";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { type CallerOptions, callerOf as kitCallerOf } from "@platform/kit/testing";
import type { OrganizationRecord, UserRecord } from "../src/domain/model.js";
import { build, IDENTITY_SCHEMA, identityMigrations } from "../src/server.js";
import { pgStore } from "../src/store/index.js";

export const CONTEXT_SECRET = "test-context-secret-0123456789";
export const CURSOR_SECRET = "test-cursor-secret-0123456789";
export const ADMIN_SECRET = "test-admin-secret-0123456789";
export const SEED = "test-seed";

type PGlite = Awaited<ReturnType<typeof openPglite>>;

export const TEST_START = "2026-01-15T12:00:00Z";

export const silentLogger = createLogger("identity-test", "silent");

/** A migrated identity schema on an in-memory PGlite. */
export async function openTestDb(): Promise<{ pglite: PGlite; db: Db }> {
  const pglite = await openPglite();
  const db = pgliteDb(pglite, IDENTITY_SCHEMA);
  await migrate(db, [kitMigrations, identityMigrations]);
  return { pglite, db };
}

export type OrgClient = Client<typeof OrganizationService>;
export type GatewayClient = Client<typeof GatewayAuthService>;
export type AdminClient = Client<typeof IdentityAdminService>;

export interface TestIdentity {
  pglite: PGlite;
  db: Db;
  clock: ManualClock;
  /** How many writes committed (the `onCommit` hook). */
  commits: () => number;
  /** OrganizationService as an integrator request of `orgId` reaches it through the gateway. */
  orgClient(orgId: string, scopes?: string[]): OrgClient;
  gatewayClient: GatewayClient;
  adminClient: AdminClient;
  /** The admin plane as reached by a caller sending `secret`. */
  adminClientSending(secret: string): AdminClient;
  /** A client of the API routes sending `ctx` signed, or no context at all (around the gateway). */
  apiClient<S extends DescService>(service: S, ctx: RequestContext | undefined): Client<S>;
  /** `service` as an integrator request acting on `orgId` reaches it through the gateway. */
  caller<S extends DescService>(service: S, orgId: string, opts?: CallerOptions): Client<S>;
  /** Empties every table and rewinds the clock, so one instance serves a whole file. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `caller` of `TestIdentity` over the API routes of a built service: each call carries a
 * context signed as the gateway signs it, with a fresh request id and Idempotency-Key.
 */
/** The service's API routes as an integrator request acting on `orgId` reaches them. */
export function callerOf(routes: Routes, clock: Clock) {
  return kitCallerOf(routes, clock, { contextSecret: CONTEXT_SECRET });
}

/** The identity service built over a fresh database, reached through in-process transports. */
export async function createTestIdentity(): Promise<TestIdentity> {
  const { pglite, db } = await openTestDb();
  const clock = new ManualClock(TEST_START);
  let commits = 0;
  const { routes, adminRoutes } = build({
    db,
    clock,
    logger: silentLogger,
    sandboxSeed: SEED,
    cursorSecret: CURSOR_SECRET,
    onCommit: () => {
      commits += 1;
    },
  });
  const apiServer = [errorInterceptor(silentLogger), trustInterceptor(CONTEXT_SECRET, clock)];
  const adminClientSending = (secret: string) =>
    createClient(
      IdentityAdminService,
      inProcessTransport(
        adminRoutes,
        [errorInterceptor(silentLogger), adminSecretInterceptor(ADMIN_SECRET)],
        [adminClientInterceptor(secret)],
      ),
    );
  const signedClient = <S extends DescService>(service: S, ctx: (() => RequestContext) | undefined) =>
    createClient(
      service,
      inProcessTransport(routes, apiServer, ctx ? [signingInterceptor(CONTEXT_SECRET, clock, ctx)] : []),
    );
  const apiClient = <S extends DescService>(service: S, ctx: RequestContext | undefined) =>
    signedClient(service, ctx && (() => ctx));
  const caller = callerOf(routes, clock);
  return {
    pglite,
    db,
    clock,
    commits: () => commits,
    orgClient: (orgId, scopes = ["organizations:read"]) =>
      apiClient(OrganizationService, {
        principal: "api",
        requestId: newId("req_"),
        orgId,
        tokenId: "tok_test",
        scopes,
      }),
    gatewayClient: apiClient(GatewayAuthService, { principal: "gateway", requestId: newId("req_") }),
    apiClient,
    caller,
    adminClient: adminClientSending(ADMIN_SECRET),
    adminClientSending,
    async reset() {
      await db.exec(`TRUNCATE identity.organizations, identity.users, identity.api_tokens,
        identity.partner_relationships, identity.delegation_audit, identity.outbox, identity.idempotency_keys,
        identity.processed_events CASCADE`);
      clock.set(TEST_START);
      commits = 0;
    },
    close: () => pglite.close(),
  };
}

export function anOrganization(overrides: Partial<OrganizationRecord> = {}): OrganizationRecord {
  const id = overrides.id ?? newId("org_");
  const at = new Date("2025-06-01T00:00:00Z");
  return {
    id,
    name: "Test Org",
    primaryEmailDomain: "test.example",
    emailDomains: ["test.example"],
    administratorUserId: overrides.administratorUserId ?? newId("usr_"),
    industry: "Testing",
    employeeCount: 50,
    logoUrl: null,
    crmOrgId: null,
    partnerAdmin: false,
    hasActiveIssues: false,
    licenseTier: "starter",
    seatTotal: 5,
    features: {
      smartScheduling: true,
      teamCalendarScheduling: false,
      replyTracking: false,
      emailBlast: false,
      dealIntelApp: false,
      meetingAi: false,
    },
    licenseAsOf: at,
    version: 1,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

export function aUser(orgId: string, overrides: Partial<UserRecord> = {}): UserRecord {
  const id = overrides.id ?? newId("usr_");
  const at = new Date("2025-06-01T00:00:00Z");
  return {
    id,
    orgId,
    email: `${id}@test.example`,
    firstName: "Test",
    lastName: "User",
    displayName: "Test User",
    title: null,
    department: null,
    phoneNumber: null,
    profileImageUrl: null,
    role: "User",
    active: true,
    invitationStatus: "accepted",
    invitedAt: at,
    invitedByUserId: null,
    invitedByName: null,
    lastLoginAt: null,
    twoFactorEnabled: false,
    crmUserId: null,
    version: 1,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

/** Inserts an organization with its administrator (role Admin) and any further users. */
export async function givenOrganization(
  db: Db,
  overrides: Partial<OrganizationRecord> = {},
  users: (orgId: string) => UserRecord[] = () => [],
): Promise<OrganizationRecord> {
  const org = anOrganization(overrides);
  await pgStore(db).tx(async (w) => {
    await w.insertOrganization(org);
    await w.insertUser(
      aUser(org.id, {
        id: org.administratorUserId,
        role: org.partnerAdmin ? "Partner Admin" : "Admin",
        displayName: "Olive Owner",
      }),
    );
    for (const u of users(org.id)) await w.insertUser(u);
  });
  return org;
}

export async function outboxRows(db: Db): Promise<{ type: string; key: string; subject: string; data: unknown }[]> {
  return db.query("SELECT type, key, subject, data FROM identity.outbox ORDER BY seq");
}

export {
  type CallerOptions,
  type CarriedProblem,
  problemDetailOf,
  problemOf,
  withHeaders,
} from "@platform/kit/testing";
