import {
  clone,
  create,
  type DescMessage,
  fromJson,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import {
  EntitlementsSchema,
  GatewayAuthService,
  type ManagedOrganization,
  ManagedOrganizationSchema,
  type Organization,
  OrganizationSchema,
  OrganizationService,
  PartnerService,
  type User,
  UserPatchSchema,
  UserSchema,
  UserService,
} from "@platform/contracts/identity";
import {
  type Attendee,
  type Meeting,
  MeetingHostSchema,
  MeetingSchema,
  MeetingService,
  type SmartSchedule,
  SmartScheduleSchema,
  SmartScheduleService,
} from "@platform/contracts/scheduling";
import { hashApiKey, seededApiKey } from "@platform/kit/api-keys";
import type { EventBus } from "@platform/kit/bus";
import { type Clock, ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import {
  apiContext,
  errorInterceptor,
  inProcessTransport,
  requestContext,
  trustInterceptor,
} from "@platform/kit/connect";
import type { RequestContext } from "@platform/kit/context";
import { IDEMPOTENT_REPLAY_HEADER } from "@platform/kit/context";
import { type CursorCodec, createCursorCodec } from "@platform/kit/cursor";
import { newId, seededId } from "@platform/kit/ids";
import { createLogger, type Logger } from "@platform/kit/logger";
import { pageOf } from "@platform/kit/pagination";
import { PROBLEM_CATALOG, type ProblemName, problem } from "@platform/kit/problems";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { buildGateway, memoryRateLimitStore, type RateLimitStore } from "../src/app.js";
import { type GatewayConfig, gatewayConfigSpec } from "../src/config.js";

export const DOCS_URL = "https://docs.gateway-test.example";
export const API = "/api/v1alpha1";

export const ORG = seededId("org_", "gw-test", "acme");
export const PARTNER_ORG = seededId("org_", "gw-test", "partner");
export const CHILD_ORG = seededId("org_", "gw-test", "child");
export const SECOND_CHILD_ORG = seededId("org_", "gw-test", "second-child");
export const REVOKED_CHILD_ORG = seededId("org_", "gw-test", "revoked-child");
export const STRANGER_ORG = seededId("org_", "gw-test", "stranger");
export const UNKNOWN_ORG = seededId("org_", "gw-test", "nobody");

/** Users of ORG (ADA, BEN, CAROL) and of CHILD_ORG (DAN). */
export const ADA = seededId("usr_", "gw-test", "ada");
export const BEN = seededId("usr_", "gw-test", "ben");
export const CAROL = seededId("usr_", "gw-test", "carol");
export const DAN = seededId("usr_", "gw-test", "dan");

interface FakeToken {
  tokenId: string;
  orgId: string;
  scopes: string[];
  expireTime?: Date;
  revokeTime?: Date;
}

function organization(id: string, name: string, crm?: string): Organization {
  return create(OrganizationSchema, {
    id,
    name,
    primaryEmailDomain: "acme.example",
    emailDomains: ["acme.example", "acme.test"],
    administrator: { userId: seededId("usr_", "gw-test", `${name}-admin`), displayName: "Ada Admin" },
    industry: "Software",
    employeeCount: 120,
    sourceRefs: crm ? { crm: { orgId: crm } } : {},
    createTime: timestampFromDate(new Date("2025-03-01T09:30:00Z")),
    updateTime: timestampFromDate(new Date("2026-01-10T17:45:12.500Z")),
    version: 7n,
  });
}

const ts = (iso: string) => timestampFromDate(new Date(iso));

function seedUsers(): User[] {
  return [
    create(UserSchema, {
      id: ADA,
      orgId: ORG,
      email: "ada@acme.example",
      firstName: "Ada",
      lastName: "Admin",
      displayName: "Ada Admin",
      title: "CEO",
      department: "Management",
      phoneNumber: "+1 555 0100",
      profileImageUrl: "https://cdn.example/ada.png",
      role: "Admin",
      active: true,
      invitationStatus: "accepted",
      lastLoginTime: ts("2026-01-14T08:00:00Z"),
      twoFactorEnabled: true,
      crmUserId: "0055g00000AdA",
      createTime: ts("2025-03-01T09:30:00Z"),
      updateTime: ts("2025-12-01T10:00:00Z"),
      version: 3n,
    }),
    create(UserSchema, {
      id: BEN,
      orgId: ORG,
      email: "ben@acme.example",
      firstName: "Ben",
      displayName: "Ben",
      role: "User",
      active: true,
      invitationStatus: "pending",
      invitedBy: { userId: "", displayName: "Acme API" },
      inviteTime: ts("2026-01-10T12:00:00Z"),
      createTime: ts("2026-01-10T12:00:00Z"),
      updateTime: ts("2026-01-10T12:00:00Z"),
      version: 1n,
    }),
    create(UserSchema, {
      id: CAROL,
      orgId: ORG,
      email: "carol@acme.example",
      firstName: "Carol",
      lastName: "Former",
      displayName: "Carol Former",
      role: "User",
      active: false,
      invitationStatus: "accepted",
      invitedBy: { userId: ADA, displayName: "Ada Admin" },
      inviteTime: ts("2025-06-01T09:00:00Z"),
      createTime: ts("2025-06-01T09:00:00Z"),
      updateTime: ts("2025-11-01T09:00:00Z"),
      version: 5n,
    }),
    create(UserSchema, {
      id: DAN,
      orgId: CHILD_ORG,
      email: "dan@child.example",
      displayName: "Dan",
      role: "Admin",
      active: true,
      invitationStatus: "accepted",
      createTime: ts("2025-04-01T09:00:00Z"),
      updateTime: ts("2025-04-01T09:00:00Z"),
      version: 1n,
    }),
  ];
}

/** What a partner sees of each child beyond the organization itself. */
interface ChildState {
  licenseTier: { slug: string; name: string };
  seats: { total: number; used: number };
  hasActiveIssues: boolean;
  relationshipCreateTime: Timestamp;
}

const ROLES = ["User", "Admin", "Partner Admin"];
const LICENSE_TIERS = ["starter", "professional", "enterprise"];
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

const millis = (t: Timestamp | undefined) => (t ? timestampDate(t).getTime() : Number.NEGATIVE_INFINITY);

/** Sort keys of the fake lists: the REST name → the value it orders by. */
const USER_SORT: Record<string, (u: User) => string | number> = {
  createdAt: (u) => millis(u.createTime),
  updatedAt: (u) => millis(u.updateTime),
  lastLoginAt: (u) => millis(u.lastLoginTime),
  email: (u) => u.email,
  firstName: (u) => u.firstName ?? "",
  lastName: (u) => u.lastName ?? "",
};
const MANAGED_SORT: Record<string, (m: ManagedOrganization) => string | number> = {
  updatedAt: (m) => millis(m.updateTime),
  createdAt: (m) => millis(m.relationshipCreateTime),
  name: (m) => m.name,
  "seats.total": (m) => m.seats?.total ?? 0,
};

/** A keyset page over rows sorted in memory, with cursors the gateway can verify. */
function fakePage<T extends { id: string }>(
  rows: T[],
  req: { cursor: string; limit: number; sort: string },
  keys: Record<string, (row: T) => string | number>,
  codec: CursorCodec,
): { items: T[]; nextCursor: string } {
  const descending = req.sort.startsWith("-");
  const key = keys[descending ? req.sort.slice(1) : req.sort];
  if (!key) throw new Error(`fake cannot sort by ${req.sort}`);
  const sorted = [...rows].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    const order = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    return descending ? -order : order;
  });
  const after = req.cursor ? String(codec.decode(req.cursor, req.sort)[1]) : undefined;
  const start = after === undefined ? 0 : sorted.findIndex((r) => r.id === after) + 1;
  const page = pageOf(sorted.slice(start, start + req.limit + 1), req.limit, (r) => [key(r), r.id], codec, req.sort);
  return { items: page.items, nextCursor: page.nextCursor ?? "" };
}

const stable = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));

/**
 * What the fake services share: the integrator RPCs they received with their verified
 * contexts, writes that replay an Idempotency-Key like the services' idempotentRpc does, and
 * failures a test injects.
 */
abstract class FakeService {
  /** Every integrator RPC as the service received it, in order. */
  readonly received: { method: string; message: unknown }[] = [];
  /** Contexts of the integrator calls, as the service verified them. */
  readonly contexts: RequestContext[] = [];
  /** The X-Platform-Org-Id header of each integrator call. */
  readonly orgIdHeaders: (string | null)[] = [];
  /** Makes the next call of the service throw this. */
  failNext: Error | undefined;
  /** Set by the harness: cursors must verify with the gateway's secret. */
  cursors: CursorCodec = createCursorCodec("unset");
  protected readonly clock: Clock;
  readonly #idempotency = new Map<string, { request: string; response: unknown }>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** The last request the service received for one RPC (e.g. "listUsers"). */
  lastRequest<T>(method: string): T | undefined {
    return this.received.findLast((r) => r.method === method)?.message as T | undefined;
  }

  /** Records an integrator RPC and verifies its context. */
  protected call(ctx: HandlerContext, method: string, message: unknown) {
    const c = apiContext(ctx);
    this.contexts.push(c);
    this.orgIdHeaders.push(ctx.requestHeader.get("x-platform-org-id"));
    this.received.push({ method, message });
    this.maybeFail();
    return c;
  }

  /** One outcome per (token, acting-on org, key), replayed with the replay header. */
  protected idempotent<T>(ctx: HandlerContext, method: string, request: unknown, run: () => T): T {
    const c = apiContext(ctx);
    if (!c.idempotencyKey) throw problem("idempotency-key-required", "This write requires an Idempotency-Key.");
    const scope = `${c.tokenId}|${c.parentOrgId ? c.orgId : ""}|${c.idempotencyKey}`;
    const fingerprint = stable({ method, request });
    const stored = this.#idempotency.get(scope);
    if (stored) {
      if (stored.request !== fingerprint) {
        throw problem("idempotency-key-conflict", "The Idempotency-Key was used for another request.");
      }
      ctx.responseHeader.set(IDEMPOTENT_REPLAY_HEADER, "true");
      return stored.response as T;
    }
    const response = run();
    this.#idempotency.set(scope, { request: fingerprint, response });
    return response;
  }

  protected maybeFail(): void {
    const err = this.failNext;
    this.failNext = undefined;
    if (err) throw err;
  }
}

/**
 * Identity as the gateway sees it: the services in memory, behind the real trust
 * interceptor, so every call must carry a correctly signed context. Writes behave like
 * identity's: versions, 412 on a stale one, replays of an Idempotency-Key (with the replay
 * header) and 422 for the same key with another request.
 */
export class FakeIdentity extends FakeService {
  readonly tokens = new Map<string, FakeToken>();
  readonly orgs = new Map<string, Organization>([
    [ORG, organization(ORG, "Acme", "0015g00000XyZ")],
    [CHILD_ORG, organization(CHILD_ORG, "Child")],
    [PARTNER_ORG, organization(PARTNER_ORG, "Partner")],
    [SECOND_CHILD_ORG, organization(SECOND_CHILD_ORG, "Beta")],
  ]);
  readonly users = new Map(seedUsers().map((u) => [u.id, u]));
  /** Seat cap per org; seats used are the active and pending users. */
  readonly seatLimits = new Map<string, number>([[ORG, 10]]);
  readonly children = new Map<string, ChildState>([
    [
      CHILD_ORG,
      {
        licenseTier: { slug: "professional", name: "Professional" },
        seats: { total: 25, used: 20 },
        hasActiveIssues: false,
        relationshipCreateTime: ts("2025-05-01T00:00:00Z"),
      },
    ],
    [
      SECOND_CHILD_ORG,
      {
        licenseTier: { slug: "starter", name: "Starter" },
        seats: { total: 5, used: 5 },
        hasActiveIssues: true,
        relationshipCreateTime: ts("2025-09-01T00:00:00Z"),
      },
    ],
  ]);
  /** parent|child → granted scopes; a revoked relationship is kept with revoked: true. */
  readonly grants = new Map<string, { scopes: string[]; revoked: boolean }>([
    [
      `${PARTNER_ORG}|${CHILD_ORG}`,
      { scopes: ["organizations:read", "deals:read", "deals:write", "webhooks:read"], revoked: false },
    ],
    [`${PARTNER_ORG}|${REVOKED_CHILD_ORG}`, { scopes: ["organizations:read"], revoked: true }],
    [`${PARTNER_ORG}|${SECOND_CHILD_ORG}`, { scopes: ["users:read", "users:write"], revoked: false }],
  ]);
  readonly calls = { resolveApiKey: 0, resolveDelegation: 0 };
  #keys = 0;

  addToken(t: Omit<FakeToken, "tokenId">): string {
    this.#keys += 1;
    const key = seededApiKey("gw-test", `key-${this.#keys}`);
    this.tokens.set(hashApiKey(key), { ...t, tokenId: `tok_${this.#keys}` });
    return key;
  }

  tokenOf(key: string): FakeToken {
    return this.tokens.get(hashApiKey(key))!;
  }

  routes = (router: ConnectRouter) => {
    router.service(GatewayAuthService, {
      resolveApiKey: async (req, ctx) => {
        if (requestContext(ctx).principal !== "gateway") throw problem("missing-trust-header");
        this.calls.resolveApiKey += 1;
        this.maybeFail();
        const t = this.tokens.get(req.keyHash);
        if (!t) throw problem("unknown-subscription", "The API key is unknown.");
        return {
          tokenId: t.tokenId,
          orgId: t.orgId,
          scopes: t.scopes,
          expireTime: t.expireTime ? timestampFromDate(t.expireTime) : undefined,
          revokeTime: t.revokeTime ? timestampFromDate(t.revokeTime) : undefined,
        };
      },
      resolveDelegation: async (req, ctx) => {
        if (requestContext(ctx).principal !== "gateway") throw problem("missing-trust-header");
        this.calls.resolveDelegation += 1;
        const grant = this.grants.get(`${req.parentOrgId}|${req.childOrgId}`);
        // Identity's detail names the org; the gateway must not pass such differences on.
        if (!grant) throw problem("cross-org-delegation-forbidden", `${req.childOrgId} is not a child.`);
        if (grant.revoked) throw problem("cross-org-delegation-forbidden", `${req.childOrgId} was revoked.`);
        return { grantedScopes: grant.scopes };
      },
    });
    router.service(OrganizationService, {
      getOrganization: async (req, ctx) => {
        const c = this.call(ctx, "getOrganization", req);
        const id = req.orgId || c.orgId;
        const org = this.orgs.get(id);
        if (id !== c.orgId || !org) throw problem("organization-not-found", "No such organization.");
        return { organization: org };
      },
      updateOrganization: async (req, ctx) => {
        const c = this.call(ctx, "updateOrganization", req);
        return this.idempotent(ctx, "updateOrganization", req, () => {
          const org = this.orgs.get(req.orgId);
          if (req.orgId !== c.orgId || !org) throw problem("organization-not-found", "No such organization.");
          if (org.version !== req.expectedVersion) {
            throw problem("precondition-failed", `The organization is at version ${org.version}.`);
          }
          if (req.primaryEmailDomain !== undefined && !org.emailDomains.includes(req.primaryEmailDomain)) {
            throw problem("email-domain-not-verified", `${req.primaryEmailDomain} is not a verified domain.`);
          }
          const updated = create(OrganizationSchema, {
            ...org,
            ...(req.name !== undefined ? { name: req.name } : {}),
            ...(req.primaryEmailDomain !== undefined ? { primaryEmailDomain: req.primaryEmailDomain } : {}),
            ...(req.industry !== undefined ? { industry: req.industry } : {}),
            ...(req.employeeCount !== undefined ? { employeeCount: req.employeeCount } : {}),
            updateTime: timestampFromDate(this.clock.now()),
            version: org.version + 1n,
          });
          this.orgs.set(org.id, updated);
          return { organization: updated };
        });
      },
      getEntitlements: async (req, ctx) => {
        const c = this.call(ctx, "getEntitlements", req);
        return {
          entitlements: create(EntitlementsSchema, {
            orgId: c.orgId,
            features: { smartScheduling: true, emailBlast: true, meetingAi: false },
            seats: { total: 25, used: 20, available: 5 },
            licenseTier: { slug: "professional", name: "Professional" },
            asOf: timestampFromDate(new Date("2026-01-15T00:00:00Z")),
          }),
        };
      },
    });
    router.service(UserService, {
      listUsers: async (req, ctx) => {
        const c = this.call(ctx, "listUsers", req);
        if (req.role !== "" && !ROLES.includes(req.role)) {
          throw problem("invalid-filter", `role must be one of ${ROLES.join(", ")}.`, { field: "role" });
        }
        if (!["true", "false", "all"].includes(req.active)) {
          throw problem("invalid-filter", "active must be true, false or all.", { field: "active" });
        }
        const search = req.search.toLowerCase();
        const rows = [...this.users.values()].filter(
          (u) =>
            u.orgId === c.orgId &&
            (req.role === "" || u.role === req.role) &&
            (req.active === "all" || String(u.active) === req.active) &&
            (!req.since || millis(u.updateTime) >= millis(req.since)) &&
            [u.email, u.firstName, u.lastName, u.displayName].some((v) => v?.toLowerCase().includes(search)),
        );
        const page = fakePage(rows, req, USER_SORT, this.cursors);
        return { users: page.items, nextCursor: page.nextCursor };
      },
      getUser: async (req, ctx) => {
        const c = this.call(ctx, "getUser", req);
        return { user: this.#user(req.userId, c.orgId) };
      },
      inviteUser: async (req, ctx) => {
        const c = this.call(ctx, "inviteUser", req);
        return this.idempotent(ctx, "inviteUser", req, () => {
          if (!EMAIL.test(req.email)) throw problem("invalid-email", "The email is not valid.");
          this.#checkRole(req.role, c.orgId);
          const email = req.email.toLowerCase();
          const existing = [...this.users.values()].find((u) => u.orgId === c.orgId && u.email === email);
          if (existing) {
            throw problem("email-already-in-use", "A user with this email exists.", { existingUserId: existing.id });
          }
          const seatLimit = this.seatLimits.get(c.orgId) ?? 10;
          const used = [...this.users.values()].filter(
            (u) => u.orgId === c.orgId && (u.active || u.invitationStatus === "pending"),
          ).length;
          if (used >= seatLimit) {
            throw problem("seat-limit-exceeded", "No seat is left.", { seatLimit, remainingSeats: 0 });
          }
          const now = timestampFromDate(this.clock.now());
          const user = create(UserSchema, {
            id: newId("usr_"),
            orgId: c.orgId,
            email,
            firstName: req.firstName,
            lastName: req.lastName,
            displayName: [req.firstName, req.lastName].filter(Boolean).join(" ") || email,
            title: req.title,
            department: req.department,
            role: req.role,
            active: true,
            invitationStatus: "pending",
            invitedBy: { userId: "", displayName: "Acme API" },
            inviteTime: now,
            createTime: now,
            updateTime: now,
            version: 1n,
          });
          this.users.set(user.id, user);
          return { user };
        });
      },
      updateUser: async (req, ctx) => {
        const c = this.call(ctx, "updateUser", req);
        return this.idempotent(ctx, "updateUser", req, () => {
          const user = this.#user(req.userId, c.orgId);
          if (user.version !== req.expectedVersion) {
            throw problem("precondition-failed", `The user is at version ${user.version}.`);
          }
          const patch = req.patch ?? create(UserPatchSchema);
          if (patch.role !== undefined) this.#checkRole(patch.role, c.orgId);
          const updated = create(UserSchema, { ...user });
          for (const field of ["firstName", "lastName", "title", "department", "phoneNumber", "role"] as const) {
            if (patch[field] !== undefined) updated[field] = patch[field];
          }
          if (patch.active !== undefined) updated.active = patch.active;
          for (const name of patch.cleared) {
            const field = UserPatchSchema.fields.find((f) => f.name === name)?.localName;
            if (!field || !["firstName", "lastName", "title", "department", "phoneNumber"].includes(field)) {
              throw problem("invalid-field", `${name} cannot be cleared.`, { field: name });
            }
            (updated as unknown as Record<string, unknown>)[field] = undefined;
          }
          const admins = [...this.users.values()].filter(
            (u) => u.orgId === c.orgId && u.id !== user.id && u.active && u.role === "Admin",
          );
          if (user.role === "Admin" && (updated.role !== "Admin" || !updated.active) && admins.length === 0) {
            throw problem("last-administrator", "The organization would have no administrator left.");
          }
          updated.updateTime = timestampFromDate(this.clock.now());
          updated.version = user.version + 1n;
          this.users.set(updated.id, updated);
          return { user: updated };
        });
      },
    });
    router.service(PartnerService, {
      listManagedOrganizations: async (req, ctx) => {
        const c = this.call(ctx, "listManagedOrganizations", req);
        if (req.licenseTier !== "" && !LICENSE_TIERS.includes(req.licenseTier)) {
          throw problem("invalid-filter", `licenseTier must be one of ${LICENSE_TIERS.join(", ")}.`, {
            field: "licenseTier",
          });
        }
        const rows: ManagedOrganization[] = [];
        for (const [key, grant] of this.grants) {
          const [parent, child = ""] = key.split("|");
          const org = this.orgs.get(child);
          const state = this.children.get(child);
          if (parent !== c.orgId || grant.revoked || !org || !state) continue;
          rows.push(
            create(ManagedOrganizationSchema, {
              id: org.id,
              name: org.name,
              primaryEmailDomain: org.primaryEmailDomain,
              industry: org.industry,
              licenseTier: state.licenseTier,
              seats: { ...state.seats, available: state.seats.total - state.seats.used },
              grantedScopes: c.scopes.filter((s) => grant.scopes.includes(s)),
              hasActiveIssues: state.hasActiveIssues,
              relationshipCreateTime: state.relationshipCreateTime,
              updateTime: org.updateTime,
            }),
          );
        }
        const filtered = rows.filter(
          (m) =>
            m.name.toLowerCase().includes(req.search.toLowerCase()) &&
            (req.industry === "" || m.industry === req.industry) &&
            (req.licenseTier === "" || m.licenseTier?.slug === req.licenseTier) &&
            (req.hasActiveIssues === undefined || m.hasActiveIssues === req.hasActiveIssues),
        );
        const page = fakePage(filtered, req, MANAGED_SORT, this.cursors);
        return { organizations: page.items, nextCursor: page.nextCursor };
      },
    });
  };

  #user(id: string, orgId: string): User {
    const user = this.users.get(id);
    if (!user || user.orgId !== orgId) throw problem("user-not-found", "No such user.");
    return user;
  }

  #checkRole(role: string, orgId: string): void {
    if (!ROLES.includes(role) || (role === "Partner Admin" && orgId !== PARTNER_ORG)) {
      throw problem(
        "invalid-role",
        `role must be one of ${ROLES.join(", ")}; Partner Admin on partner organizations only.`,
      );
    }
  }
}

/** Smart Schedules: SCHEDULE (published, full detail), UNPUBLISHED and DISABLED of ORG, a draft, one of CHILD_ORG. */
export const SCHEDULE = seededId("sched_", "gw-test", "discovery");
export const UNPUBLISHED_SCHEDULE = seededId("sched_", "gw-test", "partner-intro");
export const DISABLED_SCHEDULE = seededId("sched_", "gw-test", "legacy-demo");
export const DRAFT_SCHEDULE = seededId("sched_", "gw-test", "draft");
export const CHILD_SCHEDULE = seededId("sched_", "gw-test", "child");

/**
 * Meetings of ORG: BOOKED (a Smart Schedule booking, in person), PLAIN (nothing optional
 * set), PAST (already over); and FOREIGN of CHILD_ORG.
 */
export const BOOKED_MEETING = seededId("mtg_", "gw-test", "booked");
export const PLAIN_MEETING = seededId("mtg_", "gw-test", "plain");
export const PAST_MEETING = seededId("mtg_", "gw-test", "past");
export const FOREIGN_MEETING = seededId("mtg_", "gw-test", "foreign");

/** The plain-object form of a message's init, which spreads cleanly over defaults. */
type Init<Desc extends DescMessage> = Exclude<MessageInitShape<Desc>, MessageShape<Desc>>;

const HOSTS: Record<string, { email: string; firstName: string; lastName: string; displayName: string }> = {
  [ADA]: { email: "ada@acme.example", firstName: "Ada", lastName: "Admin", displayName: "Ada Admin" },
  [BEN]: { email: "ben@acme.example", firstName: "Ben", lastName: "Baker", displayName: "Ben Baker" },
};

interface StoredSchedule {
  id: string;
  orgId: string;
  createTime: Timestamp;
  schedule: SmartSchedule;
}

function seedSchedules(): StoredSchedule[] {
  const stored = (orgId: string, created: string, init: Init<typeof SmartScheduleSchema>) => {
    const schedule = create(SmartScheduleSchema, {
      description: "",
      status: "active",
      durationMinutes: 30,
      bookingPeriods: [30],
      timeZone: "UTC",
      bookingWindow: { minAdvanceMinutes: 0, maxAdvanceDays: 30 },
      assignees: [{ userId: ADA, displayName: "Ada Admin" }],
      ...init,
    });
    return { id: schedule.id, orgId, createTime: ts(created), schedule };
  };
  return [
    stored(ORG, "2025-05-20T10:00:00Z", {
      id: SCHEDULE,
      name: "Discovery call",
      description: "A first call with sales",
      durationMinutes: 30,
      bookingPeriods: [30, 45],
      timeZone: "Europe/Berlin",
      publishTime: ts("2025-06-01T08:00:00Z"),
      updateTime: ts("2026-01-05T09:00:00Z"),
      bookingWindow: { minAdvanceMinutes: 120, maxAdvanceDays: 14 },
      matchingFormFields: [
        { key: "region", label: "Region", type: "select", options: ["emea", "amer"], required: true },
        { key: "seats", label: "Seats", type: "number", options: [], required: false },
      ],
      surveyQuestions: [
        { key: "what-would-you-like-to-discuss", label: "What would you like to discuss?", type: "long-text" },
      ],
      assignees: [
        { userId: ADA, displayName: "Ada Admin" },
        { userId: BEN, displayName: "Ben Baker" },
      ],
    }),
    stored(ORG, "2025-09-01T10:00:00Z", {
      id: UNPUBLISHED_SCHEDULE,
      name: "Partner intro",
      updateTime: ts("2026-01-08T09:00:00Z"),
    }),
    stored(ORG, "2025-03-01T10:00:00Z", {
      id: DISABLED_SCHEDULE,
      name: "Legacy demo",
      status: "disabled",
      publishTime: ts("2025-03-02T10:00:00Z"),
      updateTime: ts("2026-01-10T09:00:00Z"),
    }),
    stored(ORG, "2026-01-01T10:00:00Z", {
      id: DRAFT_SCHEDULE,
      name: "Draft",
      status: "draft",
      updateTime: ts("2026-01-12T09:00:00Z"),
    }),
    stored(CHILD_ORG, "2025-04-01T10:00:00Z", {
      id: CHILD_SCHEDULE,
      name: "Child schedule",
      publishTime: ts("2025-04-01T10:00:00Z"),
      updateTime: ts("2025-04-01T10:00:00Z"),
    }),
  ];
}

function seedMeetings(): Meeting[] {
  const meeting = (init: Init<typeof MeetingSchema>) =>
    create(MeetingSchema, {
      orgId: ORG,
      host: { userId: ADA, ...HOSTS[ADA] },
      attendee: { email: "pat@customer.example", firstName: "Pat", lastName: "Lee" },
      title: "Discovery call with Pat Lee",
      timeZone: "Europe/Berlin",
      status: "scheduled",
      createTime: ts("2026-01-12T08:00:00Z"),
      updateTime: ts("2026-01-12T08:00:00Z"),
      ...init,
    });
  return [
    meeting({
      id: BOOKED_MEETING,
      attendee: {
        email: "pat@customer.example",
        firstName: "Pat",
        lastName: "Lee",
        phone: "+14155550100",
        timeZone: "America/New_York",
      },
      additionalAttendees: ["sam@customer.example"],
      startTime: ts("2026-01-22T10:00:00Z"),
      endTime: ts("2026-01-22T10:30:00Z"),
      location: { type: "in-person", address: "1 Main St, Springfield" },
      calendarEventId: "evt-booked",
      updateTime: ts("2026-01-13T08:00:00Z"),
      smartScheduling: {
        scheduleId: SCHEDULE,
        formValues: [
          { key: "region", answer: fromJson(ValueSchema, "emea") },
          { key: "seats", answer: fromJson(ValueSchema, 40) },
          { key: "products", answer: fromJson(ValueSchema, ["crm", "voice"]) },
          { key: "existingCustomer", answer: fromJson(ValueSchema, false) },
        ],
        surveyResponses: [{ question: "What would you like to discuss?", answer: "Pricing" }],
        rescheduleUrl: `https://book.example/r/${BOOKED_MEETING}`,
        cancelUrl: `https://book.example/c/${BOOKED_MEETING}`,
        campaign: { source: "newsletter" },
      },
    }),
    meeting({
      id: PLAIN_MEETING,
      startTime: ts("2026-01-20T15:00:00Z"),
      endTime: ts("2026-01-20T15:30:00Z"),
    }),
    meeting({
      id: PAST_MEETING,
      startTime: ts("2026-01-10T09:00:00Z"),
      endTime: ts("2026-01-10T09:30:00Z"),
      createTime: ts("2026-01-02T08:00:00Z"),
      updateTime: ts("2026-01-02T08:00:00Z"),
      smartScheduling: {
        scheduleId: SCHEDULE,
        rescheduleUrl: "https://book.example/r",
        cancelUrl: "https://book.example/c",
      },
    }),
    meeting({
      id: FOREIGN_MEETING,
      orgId: CHILD_ORG,
      startTime: ts("2026-01-21T15:00:00Z"),
      endTime: ts("2026-01-21T15:30:00Z"),
    }),
  ];
}

/** What the fake's slot tokens carry (the real ones are signed; these are only encoded). */
export interface FakeSlot {
  orgId: string;
  scheduleId: string;
  hostUserId: string;
  start: string;
  end: string;
  preview: boolean;
  issuedAt: string;
}

const TOKEN_PREFIX = "fake-slot.";
const SLOT_TOKEN_LIFETIME_MS = 10 * 60_000;
const E164 = /^\+[1-9]\d{1,14}$/;
const SCHEDULE_SORT: Record<string, (s: StoredSchedule) => string | number> = {
  updatedAt: (s) => millis(s.schedule.updateTime),
  createdAt: (s) => millis(s.createTime),
  name: (s) => s.schedule.name,
};

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Scheduling as the gateway sees it: SmartScheduleService and MeetingService in memory,
 * behind the real trust interceptor. It judges what the real service judges (filters,
 * durations, form values, attendee values, slot tokens, conflicts, meeting states), so the
 * gateway's pass-through of those problems is tested, and it replays Idempotency-Keys.
 */
export class FakeScheduling extends FakeService {
  readonly schedules = new Map(seedSchedules().map((s) => [s.id, s]));
  readonly meetings = new Map(seedMeetings().map((m) => [m.id, m]));
  readonly canceled = new Set<string>();

  /** A slot token as availability would issue it now; `overrides` make bad ones. */
  slotToken(overrides: Partial<FakeSlot> = {}): string {
    const slot: FakeSlot = {
      orgId: ORG,
      scheduleId: SCHEDULE,
      hostUserId: ADA,
      start: "2026-01-16T09:00:00.000Z",
      end: "2026-01-16T09:30:00.000Z",
      preview: false,
      issuedAt: this.clock.now().toISOString(),
      ...overrides,
    };
    return TOKEN_PREFIX + Buffer.from(JSON.stringify(slot)).toString("base64url");
  }

  routes = (router: ConnectRouter) => {
    router.service(SmartScheduleService, {
      listSmartSchedules: async (req, ctx) => {
        const c = this.call(ctx, "listSmartSchedules", req);
        if (!["", "active", "all"].includes(req.status)) {
          throw problem("invalid-filter", "status must be active or all.", { field: "status" });
        }
        const statuses = req.status === "all" ? ["active", "disabled"] : ["active"];
        const rows = [...this.schedules.values()].filter(
          (s) =>
            s.orgId === c.orgId &&
            statuses.includes(s.schedule.status) &&
            s.schedule.name.toLowerCase().includes(req.name.toLowerCase()),
        );
        const page = fakePage(rows, req, SCHEDULE_SORT, this.cursors);
        return { schedules: page.items.map((s) => s.schedule), nextCursor: page.nextCursor };
      },
      getSmartSchedule: async (req, ctx) => {
        const c = this.call(ctx, "getSmartSchedule", req);
        return { schedule: this.#schedule(req.scheduleId, c.orgId) };
      },
      getAvailability: async (req, ctx) => {
        const c = this.call(ctx, "getAvailability", req);
        const schedule = this.#schedule(req.scheduleId, c.orgId);
        if (schedule.status !== "active") throw problem("schedule-unavailable", "The schedule is disabled.");
        const duration = req.durationMinutes ?? schedule.durationMinutes;
        if (!schedule.bookingPeriods.includes(duration)) {
          throw problem("availability-request-invalid", `durationMinutes must be one of ${schedule.bookingPeriods}.`, {
            field: "durationMinutes",
          });
        }
        this.#checkForm(schedule, req.formValues);
        const from = req.rangeStart ? timestampDate(req.rangeStart) : new Date("2026-01-16T09:00:00Z");
        const slots = (hostUserId: string) =>
          [0, 60].map((offset) => {
            const start = new Date(from.getTime() + offset * 60_000);
            const end = new Date(start.getTime() + duration * 60_000);
            return {
              startTime: timestampFromDate(start),
              endTime: timestampFromDate(end),
              slotToken: this.slotToken({
                orgId: c.orgId,
                scheduleId: schedule.id,
                hostUserId,
                start: start.toISOString(),
                end: end.toISOString(),
                preview: req.preview,
              }),
            };
          });
        const host = (id: string) => ({ host: { userId: id, displayName: HOSTS[id]!.displayName }, slots: slots(id) });
        return {
          hostGroups: [{ hosts: [host(ADA)] }, { hosts: [host(BEN)] }],
          matchTime: timestampFromDate(this.clock.now()),
        };
      },
    });
    router.service(MeetingService, {
      bookMeeting: async (req, ctx) => {
        const c = this.call(ctx, "bookMeeting", req);
        return this.idempotent(ctx, "bookMeeting", req, () => {
          const slot = this.#slot(req.slotToken, c.orgId);
          const schedule = this.#schedule(slot.scheduleId, c.orgId);
          this.#checkForm(schedule, req.formValues, this.#attendeeErrors(req.attendee));
          const questions = schedule.surveyQuestions.map((q) => q.label);
          const unknown = Object.keys(req.surveyResponses).find((q) => !questions.includes(q));
          if (unknown !== undefined) {
            throw problem("booking-validation-failed", `The schedule has no survey question '${unknown}'.`);
          }
          this.#checkFree(slot);
          const id = newId("mtg_");
          const now = timestampFromDate(this.clock.now());
          const meeting = create(MeetingSchema, {
            id,
            orgId: c.orgId,
            host: { userId: slot.hostUserId, ...HOSTS[slot.hostUserId] },
            attendee: req.attendee,
            additionalAttendees: req.additionalAttendees,
            title: `${schedule.name} with ${req.attendee?.firstName} ${req.attendee?.lastName}`,
            startTime: ts(slot.start),
            endTime: ts(slot.end),
            timeZone: schedule.timeZone,
            location: { type: "video", provider: "video_a", joinUrl: `https://video-a.example/j/${id}` },
            conferencing: { provider: "video_a", providerMeetingId: `va-${id}` },
            calendarEventId: `evt-${id}`,
            status: "scheduled",
            createTime: now,
            updateTime: now,
            smartScheduling: {
              scheduleId: schedule.id,
              formValues: Object.entries(req.formValues).map(([key, answer]) => ({ key, answer })),
              surveyResponses: Object.entries(req.surveyResponses).map(([question, answer]) => ({ question, answer })),
              rescheduleUrl: `https://book.example/r/${id}`,
              cancelUrl: `https://book.example/c/${id}`,
              campaign: req.campaign,
              preview: slot.preview,
            },
          });
          this.meetings.set(id, meeting);
          return { meeting };
        });
      },
      getMeeting: async (req, ctx) => {
        const c = this.call(ctx, "getMeeting", req);
        return { meeting: this.#withStatus(this.#meeting(req.meetingId, c.orgId)) };
      },
      rescheduleMeeting: async (req, ctx) => {
        const c = this.call(ctx, "rescheduleMeeting", req);
        return this.idempotent(ctx, "rescheduleMeeting", req, () => {
          const meeting = this.#withStatus(this.#meeting(req.meetingId, c.orgId));
          if (meeting.status !== "scheduled") {
            throw problem("meeting-not-reschedulable", `The meeting is ${meeting.status}.`);
          }
          const slot = this.#slot(req.slotToken, c.orgId);
          if (slot.scheduleId !== meeting.smartScheduling?.scheduleId) {
            throw problem("schedule-mismatch", "The slot token is of another schedule.");
          }
          this.#checkFree(slot, meeting.id);
          const moved = clone(MeetingSchema, meeting);
          moved.host = create(MeetingHostSchema, { userId: slot.hostUserId, ...HOSTS[slot.hostUserId] });
          moved.startTime = ts(slot.start);
          moved.endTime = ts(slot.end);
          moved.updateTime = timestampFromDate(this.clock.now());
          this.meetings.set(moved.id, moved);
          return { meeting: moved };
        });
      },
      cancelMeeting: async (req, ctx) => {
        const c = this.call(ctx, "cancelMeeting", req);
        const meeting = this.#withStatus(this.#meeting(req.meetingId, c.orgId));
        if (meeting.status === "completed") throw problem("meeting-completed", "The meeting is over.");
        if (meeting.status === "scheduled") {
          this.canceled.add(meeting.id);
          this.meetings.set(meeting.id, { ...meeting, updateTime: timestampFromDate(this.clock.now()) });
        }
        return {};
      },
    });
  };

  #schedule(id: string, orgId: string): SmartSchedule {
    const stored = this.schedules.get(id);
    if (!stored || stored.orgId !== orgId || stored.schedule.status === "draft") {
      throw problem("schedule-not-found", "No such schedule.");
    }
    return stored.schedule;
  }

  #meeting(id: string, orgId: string): Meeting {
    const meeting = this.meetings.get(id);
    if (!meeting || meeting.orgId !== orgId) throw problem("meeting-not-found", "No such meeting.");
    return meeting;
  }

  /** The status derives from the cancellation and the clock, as the spec's states say. */
  #withStatus(m: Meeting): Meeting {
    const status = this.canceled.has(m.id)
      ? "canceled"
      : millis(m.endTime) <= this.clock.now().getTime()
        ? "completed"
        : "scheduled";
    return { ...m, status };
  }

  #slot(token: string, orgId: string): FakeSlot {
    let slot: FakeSlot;
    try {
      if (!token.startsWith(TOKEN_PREFIX)) throw new Error("not a fake token");
      slot = JSON.parse(Buffer.from(token.slice(TOKEN_PREFIX.length), "base64url").toString()) as FakeSlot;
    } catch {
      throw problem("slot-token-invalid", "The slot token is not valid.");
    }
    if (slot.orgId !== orgId) throw problem("slot-token-invalid", "The slot token is not valid.");
    if (this.clock.now().getTime() - Date.parse(slot.issuedAt) > SLOT_TOKEN_LIFETIME_MS) {
      throw problem("slot-token-expired", "The slot token is older than 10 minutes.");
    }
    return slot;
  }

  #checkFree(slot: FakeSlot, except?: string): void {
    const [start, end] = [Date.parse(slot.start), Date.parse(slot.end)];
    const taken = [...this.meetings.values()].some(
      (m) =>
        m.id !== except &&
        m.host?.userId === slot.hostUserId &&
        !this.canceled.has(m.id) &&
        millis(m.startTime) < end &&
        millis(m.endTime) > start,
    );
    if (taken) throw problem("slot-conflict", "The slot was just taken.", { rerunAvailability: true });
  }

  #attendeeErrors(attendee: Attendee | undefined): { field: string; message: string }[] {
    const errors: { field: string; message: string }[] = [];
    if (!EMAIL.test(attendee?.email ?? "")) errors.push({ field: "attendee.email", message: "Not a valid email." });
    if (attendee?.phone !== undefined && !E164.test(attendee.phone)) {
      errors.push({ field: "attendee.phone", message: "Not an E.164 number." });
    }
    if (attendee?.timeZone !== undefined && !isTimeZone(attendee.timeZone)) {
      errors.push({ field: "attendee.timeZone", message: "Not an IANA time zone." });
    }
    return errors;
  }

  /** Required fields answered and select answers among the options; else 422 form-validation. */
  #checkForm(
    schedule: SmartSchedule,
    values: Record<string, Value>,
    errors: { field: string; message: string }[] = [],
  ) {
    for (const field of schedule.matchingFormFields) {
      const value = values[field.key]?.kind;
      if (!value) {
        if (field.required) errors.push({ field: `formValues.${field.key}`, message: "Required." });
      } else if (field.type === "select" && !(value.case === "stringValue" && field.options.includes(value.value))) {
        errors.push({ field: `formValues.${field.key}`, message: `One of ${field.options.join(", ")}.` });
      }
    }
    if (errors.length > 0) throw problem("form-validation", "Some fields are invalid.", { fieldErrors: errors });
  }
}

export interface TestGateway {
  app: FastifyInstance;
  clock: ManualClock;
  identity: FakeIdentity;
  scheduling: FakeScheduling;
  config: GatewayConfig;
}

export async function buildTestGateway(
  opts: {
    config?: Partial<GatewayConfig>;
    store?: RateLimitStore;
    bus?: EventBus;
    /** The secret the services verify contexts with; the gateway's own unless a test breaks it. */
    serviceSecret?: string;
    /** The gateway's logger, for tests that read what it logs; silent otherwise. */
    logger?: Logger;
    /** Routes standing in for a service without a fake here (a hanging one, a failing one). */
    services?: Partial<Record<"crm" | "revenue" | "analytics" | "webhooks", (router: ConnectRouter) => void>>;
  } = {},
): Promise<TestGateway> {
  const clock = new ManualClock("2026-01-15T12:00:00Z");
  const identity = new FakeIdentity(clock);
  const scheduling = new FakeScheduling(clock);
  const config = {
    ...loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS_URL, LOG_LEVEL: "silent" }),
    ...opts.config,
  };
  identity.cursors = createCursorCodec(config.PLATFORM_CURSOR_SECRET);
  scheduling.cursors = identity.cursors;
  const logger = opts.logger ?? createLogger("gateway-test", "silent");
  const transport = (routes: (router: ConnectRouter) => void) =>
    inProcessTransport(routes, [
      errorInterceptor(logger),
      trustInterceptor(opts.serviceSecret ?? config.PLATFORM_CONTEXT_SECRET, clock),
    ]);
  const app = await buildGateway({
    config,
    clock,
    logger,
    transports: {
      identity: transport(identity.routes),
      scheduling: transport(scheduling.routes),
      // Contexts without a fake here answer every RPC "unimplemented" (501); their routes
      // are tested end to end on the embedded platform in runtime/test.
      crm: transport(opts.services?.crm ?? (() => {})),
      revenue: transport(opts.services?.revenue ?? (() => {})),
      analytics: transport(opts.services?.analytics ?? (() => {})),
      webhooks: transport(opts.services?.webhooks ?? (() => {})),
    },
    rateLimitStore: opts.store ?? memoryRateLimitStore(),
    ...(opts.bus ? { bus: opts.bus } : {}),
  });
  return { app, clock, identity, scheduling, config };
}

export function errorType(name: ProblemName): string {
  return `${DOCS_URL}/platform-api/errors/${name}`;
}

/** Asserts a problem+json response and returns its body. */
export function expectProblem(
  res: LightMyRequestResponse,
  name: ProblemName,
  extensions: Record<string, unknown> = {},
): Record<string, unknown> {
  const { status, title } = PROBLEM_CATALOG[name];
  const body = res.json() as Record<string, unknown>;
  expect({ status: res.statusCode, type: body.type }).toEqual({ status, type: errorType(name) });
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(body.title).toBe(title);
  expect(body.status).toBe(status);
  expect(typeof body.detail).toBe("string");
  expect(res.headers["x-request-id"]).toMatch(/\S/);
  expect(body.requestId).toBe(res.headers["x-request-id"]);
  expect(body).toMatchObject(extensions);
  // No stack trace or source location ever reaches a client.
  expect(res.body).not.toMatch(/\\n\s+at |\.[cm]?[jt]s:\d+|node_modules|"stack"/);
  return body;
}

/** Scopes of the partner token: more than the child grants, and not everything. */
export const PARTNER_SCOPES = ["partner:act-as-child", "organizations:read", "users:read", "deals:read", "deals:write"];

/** GET with an API key and optional headers. */
export function get(app: FastifyInstance, url: string, key?: string, headers: Record<string, string> = {}) {
  return app.inject({ method: "GET", url, headers: { ...(key ? { "x-platform-api-key": key } : {}), ...headers } });
}

/** The problem body without the member that differs per request. */
export function withoutRequestId(body: Record<string, unknown>): Record<string, unknown> {
  const { requestId: _ignored, ...rest } = body;
  return rest;
}
