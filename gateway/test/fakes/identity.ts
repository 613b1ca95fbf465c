// Identity as the gateway sees it (GatewayAuthService, OrganizationService, UserService,
// PartnerService), in memory over the data of identity-data.ts.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  EntitlementsSchema,
  GatewayAuthService,
  LICENSE_TIERS,
  type ManagedOrganization,
  ManagedOrganizationSchema,
  type Organization,
  OrganizationSchema,
  OrganizationService,
  PartnerService,
  ROLES,
  type User,
  UserPatchSchema,
  UserSchema,
  UserService,
} from "@platform/contracts/identity";
import { hashApiKey, seededApiKey } from "@platform/kit/api-keys";
import { requestContext } from "@platform/kit/connect";
import { newId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { EMAIL, FakeService, millis, type SortKeys } from "./common.js";
import {
  type FakeToken,
  ORG,
  PARTNER_ORG,
  seedChildren,
  seedGrants,
  seedOrganizations,
  seedUsers,
} from "./identity-data.js";

// The contracts' lists, widened so that any string of a request can be looked up.
const roles: readonly string[] = ROLES;
const licenseTiers: readonly string[] = LICENSE_TIERS;

/** A token as both key look-ups answer it. */
const resolvedOf = (t: FakeToken) => ({
  tokenId: t.tokenId,
  orgId: t.orgId,
  scopes: t.scopes,
  expireTime: t.expireTime ? timestampFromDate(t.expireTime) : undefined,
  revokeTime: t.revokeTime ? timestampFromDate(t.revokeTime) : undefined,
});

/** GatewayAuthService answers the gateway only, never an integrator's call. */
function onlyFromGateway(ctx: HandlerContext): void {
  if (requestContext(ctx).principal !== "gateway") throw problem("missing-trust-header");
}

const USER_SORT: SortKeys<User> = {
  createdAt: (u) => millis(u.createTime),
  updatedAt: (u) => millis(u.updateTime),
  lastLoginAt: (u) => millis(u.lastLoginTime),
  email: (u) => u.email,
  firstName: (u) => u.firstName ?? "",
  lastName: (u) => u.lastName ?? "",
};
const MANAGED_SORT: SortKeys<ManagedOrganization> = {
  updatedAt: (m) => millis(m.updateTime),
  createdAt: (m) => millis(m.relationshipCreateTime),
  name: (m) => m.name,
  "seats.total": (m) => m.seats?.total ?? 0,
};

/**
 * Identity as the gateway sees it: the services in memory, behind the real trust
 * interceptor, so every call must carry a correctly signed context. Writes behave like
 * identity's: versions, 412 on a stale one, replays of an Idempotency-Key (with the replay
 * header) and 422 for the same key with another request.
 */
export class FakeIdentity extends FakeService {
  readonly tokens = new Map<string, FakeToken>();
  readonly orgs = seedOrganizations();
  readonly users = new Map(seedUsers().map((u) => [u.id, u]));
  /** Seat cap per org; seats used are the active and pending users. */
  readonly seatLimits = new Map<string, number>([[ORG, 10]]);
  readonly children = seedChildren();
  /** parent|child → granted scopes; a revoked relationship is kept with revoked: true. */
  readonly grants = seedGrants();
  /** resolveApiKey counts the keys looked up, by either RPC; resolveApiKeys the batch calls. */
  readonly calls = { resolveApiKey: 0, resolveApiKeys: 0, resolveDelegation: 0 };
  /** Answer ResolveApiKeys with Unimplemented, as an identity deployed before it would. */
  batchUnimplemented = false;
  #keys = 0;

  addToken(t: Omit<FakeToken, "tokenId">): string {
    this.#keys += 1;
    const key = seededApiKey("gw-test", `key-${this.#keys}`);
    this.tokens.set(hashApiKey(key), { ...t, tokenId: `tok_${this.#keys}` });
    return key;
  }

  #resolved(keyHash: string) {
    const t = this.tokens.get(keyHash);
    return t && resolvedOf(t);
  }

  tokenOf(key: string): FakeToken {
    return this.tokens.get(hashApiKey(key))!;
  }

  routes = (router: ConnectRouter) => {
    router.service(GatewayAuthService, {
      resolveApiKey: async (req, ctx) => {
        onlyFromGateway(ctx);
        this.calls.resolveApiKey += 1;
        this.maybeFail();
        const t = this.#resolved(req.keyHash);
        if (!t) throw problem("unknown-subscription", "The API key is unknown.");
        return t;
      },
      resolveApiKeys: async (req, ctx) => {
        if (this.batchUnimplemented) throw new ConnectError("not implemented", Code.Unimplemented);
        onlyFromGateway(ctx);
        this.calls.resolveApiKeys += 1;
        this.calls.resolveApiKey += req.keyHashes.length;
        this.maybeFail();
        const tokens: Record<string, ReturnType<typeof resolvedOf>> = {};
        for (const h of req.keyHashes) {
          const t = this.#resolved(h);
          if (t) tokens[h] = t;
        }
        return { tokens };
      },
      resolveDelegation: async (req, ctx) => {
        onlyFromGateway(ctx);
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
        return { organization: this.#org(req.orgId || c.orgId, c.orgId) };
      },
      updateOrganization: async (req, ctx) => {
        return this.write(ctx, "updateOrganization", req, (c) => {
          const org = this.#org(req.orgId, c.orgId);
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
        if (req.role !== "" && !roles.includes(req.role)) {
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
        const page = this.page(rows, req, USER_SORT);
        return { users: page.items, nextCursor: page.nextCursor };
      },
      getUser: async (req, ctx) => {
        const c = this.call(ctx, "getUser", req);
        return { user: this.#user(req.userId, c.orgId) };
      },
      inviteUser: async (req, ctx) => {
        return this.write(ctx, "inviteUser", req, (c) => {
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
        return this.write(ctx, "updateUser", req, (c) => {
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
        if (req.licenseTier !== "" && !licenseTiers.includes(req.licenseTier)) {
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
        const page = this.page(filtered, req, MANAGED_SORT);
        return { organizations: page.items, nextCursor: page.nextCursor };
      },
    });
  };

  /** The caller's own organization: another one's is as unknown as a missing one. */
  #org(id: string, orgId: string): Organization {
    const org = this.orgs.get(id);
    if (id !== orgId || !org) throw problem("organization-not-found", "No such organization.");
    return org;
  }

  #user(id: string, orgId: string): User {
    return this.owned(this.users.get(id), orgId, "user-not-found", "No such user.");
  }

  #checkRole(role: string, orgId: string): void {
    if (!roles.includes(role) || (role === "Partner Admin" && orgId !== PARTNER_ORG)) {
      throw problem(
        "invalid-role",
        `role must be one of ${ROLES.join(", ")}; Partner Admin on partner organizations only.`,
      );
    }
  }
}
