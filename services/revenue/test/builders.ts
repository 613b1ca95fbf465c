import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type ServiceImpl } from "@connectrpc/connect";
import { ReferenceService } from "@platform/contracts/crm";
import { OrganizationService, UserService } from "@platform/contracts/identity";
import { type Clock, ManualClock } from "@platform/kit/clock";
import {
  adminClientInterceptor,
  adminSecretInterceptor,
  errorInterceptor,
  inProcessTransport,
  problemToConnectError,
  requestContext,
  trustInterceptor,
} from "@platform/kit/connect";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { problem } from "@platform/kit/problems";
import { type CallerOptions, callerOf as kitCallerOf } from "@platform/kit/testing";
import { crmReferences, identityDirectory } from "../src/application/references.js";
import type { DealSchemaRecord } from "../src/domain/deal-schema.js";
import type { MeetingRecord } from "../src/domain/model.js";
import { SANDBOX_CUSTOM_FIELDS, SANDBOX_INSIGHT_FIELDS, SANDBOX_STAGES } from "../src/sandbox-data.js";
import { build, REVENUE_SCHEMA, revenueMigrations } from "../src/server.js";
import { txStore } from "../src/store/index.js";

export const CONTEXT_SECRET = "test-context-secret-0123456789";
export const CURSOR_SECRET = "test-cursor-secret-0123456789";
export const ADMIN_SECRET = "test-admin-secret-0123456789";
export const TEST_START = "2026-03-02T10:00:00Z";
export const SCOPES = ["deals:read", "deals:write", "qna:read", "qna:write", "insights:read", "insights:write"];
export const silentLogger = createLogger("revenue-test", "silent");

type PGlite = Awaited<ReturnType<typeof openPglite>>;

/** What the fake crm-data knows: accounts and contacts per org, and meetings with a transcript. */
export interface FakeCrm {
  accounts: Map<string, { orgId: string; name: string }>;
  contacts: Map<string, { orgId: string; accountId: string; displayName: string; email: string }>;
  transcripts: Set<string>;
  /** How many ReferenceService calls it answered. */
  calls: number;
}

/** crm-data's ReferenceService answering from memory, for the caller's org only, behind the real trust interceptor. */
function fakeCrmTransport(crm: FakeCrm, clock: Clock) {
  const orgOf = (ctx: Parameters<typeof requestContext>[0]) => {
    crm.calls += 1;
    return requestContext(ctx).orgId;
  };
  const contactRefs = (entries: [string, FakeCrm["contacts"] extends Map<string, infer V> ? V : never][]) =>
    entries.map(([id, c]) => ({ contactId: id, accountId: c.accountId, displayName: c.displayName, email: c.email }));
  const impl: ServiceImpl<typeof ReferenceService> = {
    lookupAccounts(req, ctx) {
      const org = orgOf(ctx);
      return {
        accounts: req.accountIds.flatMap((id) => {
          const a = crm.accounts.get(id);
          return a && a.orgId === org ? [{ accountId: id, name: a.name }] : [];
        }),
      };
    },
    lookupContacts(req, ctx) {
      const org = orgOf(ctx);
      return {
        contacts: contactRefs(
          req.contactIds.flatMap((id) => {
            const c = crm.contacts.get(id);
            return c && c.orgId === org ? [[id, c] as [string, typeof c]] : [];
          }),
        ),
      };
    },
    lookupContactsByEmail(req, ctx) {
      const org = orgOf(ctx);
      const emails = new Set(req.emails.map((e) => e.toLowerCase()));
      return {
        contacts: contactRefs([...crm.contacts].filter(([, c]) => c.orgId === org && emails.has(c.email))),
      };
    },
    listAccountContactEmails(req, ctx) {
      const org = orgOf(ctx);
      return {
        emails: [...crm.contacts.values()]
          .filter((c) => c.orgId === org && c.accountId === req.accountId)
          .map((c) => c.email)
          .sort(),
      };
    },
    getTranscriptAvailability(req, ctx) {
      orgOf(ctx);
      return { availableMeetingIds: req.meetingIds.filter((id) => crm.transcripts.has(id)) };
    },
  };
  return inProcessTransport(
    (router) => router.service(ReferenceService, impl),
    [errorInterceptor(silentLogger), trustInterceptor(CONTEXT_SECRET, clock)],
  );
}

/** identity's users of each org and their administrators, from memory. */
export interface FakeIdentity {
  users: Map<string, { orgId: string; displayName: string }>;
  administrators: Map<string, string>;
}

function fakeIdentityTransport(identity: FakeIdentity, clock: Clock) {
  return inProcessTransport(
    (router) => {
      router.service(UserService, {
        getUser(req, ctx) {
          const user = identity.users.get(req.userId);
          if (!user || user.orgId !== requestContext(ctx).orgId) throw problem("user-not-found");
          return { user: { id: req.userId, orgId: user.orgId, displayName: user.displayName } };
        },
      });
      router.service(OrganizationService, {
        getOrganization(_req, ctx) {
          const orgId = requestContext(ctx).orgId ?? "";
          const adminId = identity.administrators.get(orgId);
          if (!adminId) throw problemToConnectError(problem("organization-not-found"));
          const admin = identity.users.get(adminId);
          return {
            organization: { id: orgId, administrator: { userId: adminId, displayName: admin?.displayName ?? "" } },
          };
        },
      });
    },
    [errorInterceptor(silentLogger), trustInterceptor(CONTEXT_SECRET, clock)],
  );
}

/** A default schema with the sandbox's stages, custom fields and 8P fields. */
export function aSchema(orgId: string, overrides: Partial<DealSchemaRecord> = {}): DealSchemaRecord {
  return {
    id: newId("schm_"),
    orgId,
    name: "Default pipeline",
    isDefault: true,
    version: 1,
    stages: SANDBOX_STAGES,
    customFields: SANDBOX_CUSTOM_FIELDS,
    insightFields: SANDBOX_INSIGHT_FIELDS,
    createdAt: new Date("2025-01-01T00:00:00Z"),
    updatedAt: new Date("2025-01-01T00:00:00Z"),
    ...overrides,
  };
}

export interface Org {
  orgId: string;
  schema: DealSchemaRecord;
  accountId: string;
  otherAccountId: string;
  contactId: string;
  ownerId: string;
  adminId: string;
  meetingId: string;
}

export interface TestRevenue {
  db: Db;
  clock: ManualClock;
  crm: FakeCrm;
  identity: FakeIdentity;
  commits: () => number;
  caller<S extends DescService>(service: S, orgId: string, opts?: CallerOptions): Client<S>;
  admin<S extends DescService>(service: S, secret?: string): Client<S>;
  /** An org with a default schema, two accounts, a contact (ada@…) of the first, a user, an admin and a known meeting. */
  givenOrg(): Promise<Org>;
  givenMeeting(m: Partial<MeetingRecord> & { orgId: string }): Promise<MeetingRecord>;
  close(): Promise<void>;
}

/**
 * The revenue service over a fresh PGlite (or over `migratedDb`, a real Postgres in the infra
 * tests), with fake crm-data and identity.
 */
export async function createTestRevenue(migratedDb?: Db): Promise<TestRevenue> {
  const pglite = migratedDb ? undefined : await openPglite();
  const db = migratedDb ?? pgliteDb(pglite as PGlite, REVENUE_SCHEMA);
  if (!migratedDb) await migrate(db, [kitMigrations, revenueMigrations]);
  const clock = new ManualClock(TEST_START);
  const crm: FakeCrm = { accounts: new Map(), contacts: new Map(), transcripts: new Set(), calls: 0 };
  const identity: FakeIdentity = { users: new Map(), administrators: new Map() };
  let commits = 0;
  const { routes, adminRoutes } = build({
    db,
    clock,
    logger: silentLogger,
    cursorSecret: CURSOR_SECRET,
    crm: crmReferences(fakeCrmTransport(crm, clock), CONTEXT_SECRET, clock),
    directory: identityDirectory(fakeIdentityTransport(identity, clock), CONTEXT_SECRET, clock),
    onCommit: () => {
      commits += 1;
    },
  });
  const givenMeeting = async (m: Partial<MeetingRecord> & { orgId: string }) => {
    const meeting: MeetingRecord = {
      id: newId("mtg_"),
      title: "Intro call",
      start: new Date("2026-03-01T10:00:00Z"),
      end: new Date("2026-03-01T10:30:00Z"),
      canceled: false,
      preview: false,
      attendeeEmails: [],
      ...m,
    };
    await txStore(db).upsertMeeting(meeting, clock.now());
    return meeting;
  };
  return {
    db,
    clock,
    crm,
    identity,
    commits: () => commits,
    caller: kitCallerOf(routes, clock, { contextSecret: CONTEXT_SECRET, defaultScopes: SCOPES }),
    admin: (service, secret = ADMIN_SECRET) =>
      createClient(
        service,
        inProcessTransport(
          adminRoutes,
          [errorInterceptor(silentLogger), adminSecretInterceptor(ADMIN_SECRET)],
          [adminClientInterceptor(secret)],
        ),
      ),
    async givenOrg() {
      const orgId = newId("org_");
      const schema = aSchema(orgId);
      await txStore(db).insertSchema(schema);
      const accountId = newId("acct_");
      const otherAccountId = newId("acct_");
      crm.accounts.set(accountId, { orgId, name: "Analytical Engines Ltd" });
      crm.accounts.set(otherAccountId, { orgId, name: "COBOL Systems" });
      const contactId = newId("cont_");
      const email = `ada.${orgId}@analytical.example`;
      crm.contacts.set(contactId, { orgId, accountId, displayName: "Ada Lovelace", email });
      const ownerId = newId("usr_");
      const adminId = newId("usr_");
      identity.users.set(ownerId, { orgId, displayName: "Casey Morgan" });
      identity.users.set(adminId, { orgId, displayName: "Avery Stone" });
      identity.administrators.set(orgId, adminId);
      const meeting = await givenMeeting({ orgId, attendeeEmails: [email] });
      return { orgId, schema, accountId, otherAccountId, contactId, ownerId, adminId, meetingId: meeting.id };
    },
    givenMeeting,
    close: async () => {
      await pglite?.close();
    },
  };
}

export async function outboxRows(db: Db): Promise<{ type: string; key: string; subject: string; data: unknown }[]> {
  return db.query("SELECT type, key, subject, data FROM revenue.outbox ORDER BY seq");
}

export { type CallerOptions, problemDetailOf, problemOf, withHeaders } from "@platform/kit/testing";
