import { create, toJson } from "@bufbuild/protobuf";
import { AccountChangedSchema, ContactChangedSchema } from "@platform/contracts/events/crm";
import { UserUpdatedSchema } from "@platform/contracts/events/identity";
import { DealService } from "@platform/contracts/revenue";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRevenueConsumers } from "../src/events/subscriptions.js";
import { referenceStore } from "../src/store/references.store.js";
import { createTestRevenue, type Org, problemOf, silentLogger, type TestRevenue } from "./builders.js";

let t: TestRevenue;
let org: Org;
let bus: InProcessBus;
const deals = () => t.caller(DealService, org.orgId);

beforeAll(async () => {
  t = await createTestRevenue();
  org = await t.givenOrg();
  bus = new InProcessBus({ logger: silentLogger });
  await startRevenueConsumers({ db: t.db, bus, logger: silentLogger });
});
afterAll(async () => {
  await bus.close();
  await t.close();
});

async function publish(topic: string, type: string, key: string, data: unknown, time = new Date()) {
  await bus.publish(topic, [
    toBusMessage({ id: newId("evt_"), type, source: "test", time: time.toISOString(), data }, key),
  ]);
}

const accountChanged = (accountId: string, name: string) =>
  toJson(AccountChangedSchema, create(AccountChangedSchema, { accountId, orgId: org.orgId, name }));

describe("reference projections", () => {
  it("creates a deal on an account and contact known only from crm-data's events, without asking crm-data", async () => {
    const accountId = newId("acct_");
    const contactId = newId("cont_");
    await publish(TOPICS.crm, EVENT_TYPES.accountChanged, org.orgId, accountChanged(accountId, "Orbital Mechanics"));
    await publish(
      TOPICS.crm,
      EVENT_TYPES.contactChanged,
      org.orgId,
      toJson(
        ContactChangedSchema,
        create(ContactChangedSchema, {
          contactId,
          orgId: org.orgId,
          accountId,
          displayName: "Katherine Johnson",
          email: "katherine@orbital.example",
        }),
      ),
    );
    await eventually("projected contact", () => referenceStore(t.db).findContact(org.orgId, contactId));
    const calls = t.crm.calls;
    const { deal } = await deals().createDeal({
      name: "Trajectories",
      accountId,
      primaryContactId: contactId,
      stage: "Discovery",
    });
    expect(deal?.account).toMatchObject({ id: accountId, name: "Orbital Mechanics" });
    expect(deal?.primaryContact).toMatchObject({ id: contactId, displayName: "Katherine Johnson" });
    expect(t.crm.calls).toBe(calls);
  });

  it("keeps the newest description when an older event arrives late", async () => {
    const accountId = newId("acct_");
    await publish(TOPICS.crm, EVENT_TYPES.accountChanged, org.orgId, accountChanged(accountId, "New name"), new Date());
    await eventually("projected account", () => referenceStore(t.db).findAccount(org.orgId, accountId));
    await publish(
      TOPICS.crm,
      EVENT_TYPES.accountChanged,
      org.orgId,
      accountChanged(accountId, "Old name"),
      new Date(Date.now() - 60_000),
    );
    // A later event of another account shows the late one has been handled too.
    const marker = newId("acct_");
    await publish(TOPICS.crm, EVENT_TYPES.accountChanged, org.orgId, accountChanged(marker, "Marker"));
    await eventually("marker", () => referenceStore(t.db).findAccount(org.orgId, marker));
    expect((await referenceStore(t.db).findAccount(org.orgId, accountId))?.name).toBe("New name");
  });

  it("reads an unseen id through to its owner once, keeps it, and still answers an unknown id with the owner's 404", async () => {
    const calls = t.crm.calls;
    await deals().createDeal({ name: "First", accountId: org.otherAccountId, stage: "Discovery" });
    expect(t.crm.calls).toBe(calls + 1);
    await deals().createDeal({ name: "Second", accountId: org.otherAccountId, stage: "Discovery" });
    expect(t.crm.calls).toBe(calls + 1);
    expect(await problemOf(deals().createDeal({ name: "X", accountId: newId("acct_"), stage: "Discovery" }))).toBe(
      "account-not-found",
    );
    // Another org's account is not this org's, whatever the projection holds.
    const other = await t.givenOrg();
    await t
      .caller(DealService, other.orgId)
      .createDeal({ name: "Theirs", accountId: other.accountId, stage: "Discovery" });
    expect(await problemOf(deals().createDeal({ name: "X", accountId: other.accountId, stage: "Discovery" }))).toBe(
      "account-not-found",
    );
  });

  it("forgets a user whose name identity changed, so the next write reads the new name through", async () => {
    await deals().createDeal({ name: "Owned", accountId: org.accountId, stage: "Discovery", ownerId: org.ownerId });
    expect(await referenceStore(t.db).findUser(org.orgId, org.ownerId)).toBeDefined();
    t.identity.users.set(org.ownerId, { orgId: org.orgId, displayName: "Casey Renamed" });
    await publish(
      TOPICS.identity,
      EVENT_TYPES.userUpdated,
      org.orgId,
      toJson(
        UserUpdatedSchema,
        create(UserUpdatedSchema, {
          userId: org.ownerId,
          orgId: org.orgId,
          version: 2n,
          changedFields: ["lastName"],
          active: true,
        }),
      ),
    );
    await eventually("forgotten user", async () =>
      (await referenceStore(t.db).findUser(org.orgId, org.ownerId)) ? undefined : true,
    );
    const { deal } = await deals().createDeal({
      name: "Owned again",
      accountId: org.accountId,
      stage: "Discovery",
      ownerId: org.ownerId,
    });
    expect(deal?.owner).toMatchObject({ userId: org.ownerId, displayName: "Casey Renamed" });
  });
});
