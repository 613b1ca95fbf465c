import { create, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DelegatedRequestServedSchema } from "@platform/contracts/events/gateway";
import { UserInvitedSchema } from "@platform/contracts/events/identity";
import { UserService } from "@platform/contracts/identity";
import type { Subscription } from "@platform/kit/bus";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { startOutboxRelay } from "@platform/kit/outbox-relay";
import { capturingLogger } from "@platform/kit/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type InvitationEmail, type InvitationMailer, logMailer } from "../src/application/mailer.js";
import { startIdentityConsumers } from "../src/events/subscriptions.js";
import { pgStore } from "../src/store/index.js";
import { createTestIdentity, givenOrganization, silentLogger, type TestIdentity } from "./builders.js";

let t: TestIdentity;
let bus: InProcessBus;
let subscriptions: Subscription[];
let sent: InvitationEmail[];
let failNextSend: boolean;
let logLines: Record<string, unknown>[];

const mailer: InvitationMailer = {
  async sendInvitation(invitation) {
    sent.push(invitation);
    if (failNextSend) {
      failNextSend = false;
      throw new Error("provider down");
    }
  },
};

beforeAll(async () => {
  t = await createTestIdentity();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  sent = [];
  failNextSend = false;
  logLines = [];
  bus = new InProcessBus();
  subscriptions = await startIdentityConsumers({
    db: t.db,
    bus,
    logger: capturingLogger("identity-test", "info", logLines),
    mailer,
  });
});
afterEach(async () => {
  await Promise.all(subscriptions.map((s) => s.close()));
  await bus.close();
});

function served(id: string, fields: { parentOrgId?: string; orgId?: string; time?: string; status?: number } = {}) {
  const time = new Date(fields.time ?? "2026-01-15T11:00:00Z");
  const data = create(DelegatedRequestServedSchema, {
    parentOrgId: fields.parentOrgId ?? "org_parent",
    orgId: fields.orgId ?? "org_child",
    tokenId: "tok_partner",
    method: "POST",
    path: "/api/v1alpha1/users",
    status: fields.status ?? 201,
    requestId: `req_${id}`,
    time: timestampFromDate(time),
  });
  const envelope = {
    id,
    type: EVENT_TYPES.delegatedRequestServed,
    source: "gateway",
    time: time.toISOString(),
    data: toJson(DelegatedRequestServedSchema, data),
  };
  return toBusMessage(envelope, data.parentOrgId);
}

function invited(id: string, userId = "usr_invitee") {
  const data = create(UserInvitedSchema, { userId, orgId: "org_acme", email: "new@acme.example", role: "User" });
  const envelope = {
    id,
    type: EVENT_TYPES.userInvited,
    source: "identity",
    time: "2026-01-15T12:00:00Z",
    data: toJson(UserInvitedSchema, data),
  };
  return toBusMessage(envelope, "org_acme");
}

const auditRows = () => t.db.query<{ id: string }>("SELECT id FROM identity.delegation_audit ORDER BY id");

describe("delegation audit consumer", () => {
  it("records each delegated request once, under the event's id", async () => {
    await bus.publish(TOPICS.gateway, [served("ev-1"), served("ev-2", { status: 403 })]);
    await bus.publish(TOPICS.gateway, [served("ev-1")]);
    await bus.idle();
    expect(await auditRows()).toEqual([{ id: "ev-1" }, { id: "ev-2" }]);
    const { entries } = await t.adminClient.listDelegationAudit({});
    expect(entries.map((e) => e.id).sort()).toEqual(["ev-1", "ev-2"]);
    const entry = entries.find((e) => e.id === "ev-2");
    expect(entry).toMatchObject({
      parentOrgId: "org_parent",
      orgId: "org_child",
      tokenId: "tok_partner",
      method: "POST",
      path: "/api/v1alpha1/users",
      status: 403,
      requestId: "req_ev-2",
    });
    expect(entry?.time && timestampDate(entry.time)).toEqual(new Date("2026-01-15T11:00:00Z"));
  });

  it("ignores other gateway events and skips unreadable messages without blocking the rest", async () => {
    const other = { ...served("ev-x"), headers: { ...served("ev-x").headers, ce_type: "platform.gateway.v1.Other" } };
    const garbage = { key: "k", value: Buffer.from("{"), headers: { "content-type": "application/json" } };
    await bus.publish(TOPICS.gateway, [other, garbage, served("ev-3")]);
    await bus.idle();
    expect(await auditRows()).toEqual([{ id: "ev-3" }]);
    expect(logLines.some((l) => l.msg === "unreadable event skipped")).toBe(true);
  });
});

describe("ListDelegationAudit", () => {
  beforeEach(async () => {
    const base = new Date("2026-01-01T00:00:00Z").getTime();
    await pgStore(t.db).tx(async (w) => {
      for (let i = 0; i < 60; i++) {
        await w.insertDelegationAudit({
          id: `ev-${String(i).padStart(2, "0")}`,
          parentOrgId: i % 2 ? "org_a" : "org_b",
          orgId: i % 3 ? "org_c1" : "org_c2",
          tokenId: "tok_1",
          method: "GET",
          path: "/api/v1alpha1/users",
          status: 200,
          requestId: `req_${i}`,
          time: new Date(base + i * 60_000),
        });
      }
    });
  });

  it("lists newest first, 50 by default and at most 500", async () => {
    const byDefault = await t.adminClient.listDelegationAudit({});
    expect(byDefault.entries).toHaveLength(50);
    expect(byDefault.entries[0]?.id).toBe("ev-59");
    expect((await t.adminClient.listDelegationAudit({ limit: 2 })).entries.map((e) => e.id)).toEqual([
      "ev-59",
      "ev-58",
    ]);
    expect((await t.adminClient.listDelegationAudit({ limit: 100_000 })).entries).toHaveLength(60);
  });

  it("filters by parent and by child", async () => {
    const { entries } = await t.adminClient.listDelegationAudit({ parentOrgId: "org_a", orgId: "org_c2", limit: 500 });
    expect(entries.map((e) => e.id)).toEqual([
      "ev-57",
      "ev-51",
      "ev-45",
      "ev-39",
      "ev-33",
      "ev-27",
      "ev-21",
      "ev-15",
      "ev-09",
      "ev-03",
    ]);
    expect((await t.adminClient.listDelegationAudit({ parentOrgId: "org_none" })).entries).toEqual([]);
  });
});

describe("invitation mailer consumer", () => {
  it("mails each invitation once, even when the event is delivered again", async () => {
    await bus.publish(TOPICS.identity, [invited("inv-1"), invited("inv-1")]);
    await bus.idle();
    await bus.publish(TOPICS.identity, [invited("inv-1")]);
    await bus.idle();
    expect(sent).toEqual([{ orgId: "org_acme", userId: "usr_invitee", email: "new@acme.example", role: "User" }]);
  });

  it("logs a failed send and moves on without sending it again", async () => {
    failNextSend = true;
    await bus.publish(TOPICS.identity, [
      invited("inv-2", "usr_a"),
      invited("inv-2", "usr_a"),
      invited("inv-3", "usr_b"),
    ]);
    await bus.idle();
    expect(sent.map((s) => s.userId)).toEqual(["usr_a", "usr_b"]);
    expect(logLines).toContainEqual(expect.objectContaining({ msg: "invitation email failed", userId: "usr_a" }));
  });

  it("mails an invitation made through the API once the outbox is relayed", async () => {
    const acme = await givenOrganization(t.db, { name: "Acme" });
    const { user } = await t
      .caller(UserService, acme.id, { scopes: ["users:write"] })
      .inviteUser({ email: "Invitee@Test.example", role: "User" });
    const relay = startOutboxRelay({ db: t.db, bus, logger: silentLogger });
    try {
      await relay.drain();
      await bus.idle();
    } finally {
      await relay.stop();
    }
    expect(sent).toEqual([{ orgId: acme.id, userId: user?.id, email: "invitee@test.example", role: "User" }]);
  });
});

describe("logMailer", () => {
  it("logs one line naming the user and only the domain of the address", async () => {
    await logMailer(capturingLogger("identity-test", "info", logLines)).sendInvitation({
      orgId: "org_acme",
      userId: "usr_1",
      email: "private.person@acme.example",
      role: "Admin",
    });
    expect(logLines).toHaveLength(1);
    expect(logLines[0]).toMatchObject({ msg: "invitation email sent", userId: "usr_1", emailDomain: "acme.example" });
    expect(JSON.stringify(logLines[0])).not.toContain("private.person");
  });
});
