import { randomBytes } from "node:crypto";
import { type Client, ConnectError } from "@connectrpc/connect";
import { ProblemSchema } from "@platform/contracts/common";
import { UserService } from "@platform/contracts/identity";
import { ManualClock } from "@platform/kit/clock";
import { type Db, openPg } from "@platform/kit/db";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OrganizationRecord } from "../src/domain/model.js";
import { pendingInvitationCutoff } from "../src/domain/seats.js";
import { build, identityMigrations } from "../src/server.js";
import { pgStore } from "../src/store/index.js";
import { aUser, CURSOR_SECRET, callerOf, givenOrganization, SEED, silentLogger, TEST_START } from "./builders.js";

// The org-wide invariants under real concurrency: PGlite runs one transaction at a time, so
// only a real Postgres shows whether the seat cap and the last administrator hold.
const ADMIN_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const database = `identity_it_${randomBytes(4).toString("hex")}`;

let admin: Db;
let db: Db;
let users: (orgId: string) => Client<typeof UserService>;
const clock = new ManualClock(TEST_START);

beforeAll(async () => {
  admin = openPg({ url: ADMIN_URL, schema: "public", max: 1 });
  await admin.exec(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  db = openPg({ url: url.toString(), schema: "identity", max: 12 });
  await migrate(db, [kitMigrations, identityMigrations]);
  const { routes } = build({ db, clock, logger: silentLogger, sandboxSeed: SEED, cursorSecret: CURSOR_SECRET });
  const caller = callerOf(routes, clock);
  users = (orgId) => caller(UserService, orgId, { scopes: ["users:read", "users:write"] });
});
afterAll(async () => {
  await db?.close();
  await admin?.exec(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.close();
});

/** The problem names of the rejected calls, and how many succeeded. */
async function outcomes(calls: Promise<unknown>[]): Promise<{ ok: number; problems: string[] }> {
  const settled = await Promise.allSettled(calls);
  const problems = settled.flatMap((s) =>
    s.status === "rejected"
      ? [ConnectError.from(s.reason).findDetails(ProblemSchema)[0]?.name ?? String(s.reason)]
      : [],
  );
  return { ok: settled.length - problems.length, problems };
}

const seatsUsed = (org: OrganizationRecord) =>
  pgStore(db).countSeatHolders(org.id, pendingInvitationCutoff(clock.now()));

describe("on a real Postgres", () => {
  it("checks the seat cap per invite: two seats left, three concurrent invites, one refused", async () => {
    for (let round = 0; round < 5; round++) {
      // Administrator + two users hold 3 of 5 seats.
      const org = await givenOrganization(db, { name: `Seats ${round}`, seatTotal: 5 }, (orgId) => [
        aUser(orgId),
        aUser(orgId),
      ]);
      const invites = [1, 2, 3].map((i) =>
        users(org.id).inviteUser({ email: `invitee-${i}@seats.example`, role: "User" }),
      );
      expect(await outcomes(invites)).toEqual({ ok: 2, problems: ["seat-limit-exceeded"] });
      expect(await seatsUsed(org)).toBe(5);
    }
  });

  it("never lets a crowd of invites overshoot the cap", async () => {
    const org = await givenOrganization(db, { name: "Crowd", seatTotal: 3 });
    const invites = Array.from({ length: 10 }, (_, i) =>
      users(org.id).inviteUser({ email: `crowd-${i}@seats.example`, role: "User" }),
    );
    const { ok, problems } = await outcomes(invites);
    expect(ok).toBe(2);
    expect(problems).toEqual(Array(8).fill("seat-limit-exceeded"));
    expect(await seatsUsed(org)).toBe(3);
  });

  it("keeps an administrator when two admins demote each other at once", async () => {
    for (let round = 0; round < 5; round++) {
      let other = "";
      const org = await givenOrganization(db, { name: `Admins ${round}` }, (orgId) => {
        const second = aUser(orgId, { role: "Admin" });
        other = second.id;
        return [second];
      });
      const demote = (userId: string) =>
        users(org.id).updateUser({ userId, expectedVersion: 1n, patch: { role: "User", cleared: [] } });
      expect(await outcomes([demote(org.administratorUserId), demote(other)])).toEqual({
        ok: 1,
        problems: ["last-administrator"],
      });
      const admins = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM identity.users WHERE org_id = $1 AND role = 'Admin'",
        [org.id],
      );
      expect(admins).toEqual([{ n: 1 }]);
    }
  });
});
