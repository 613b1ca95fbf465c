import { describe, expect, it } from "vitest";
import { acct, acme, clock, cont, crmAdmin, expectProblem, keys, ok, useCrmPlatform } from "./setup.js";

// Contacts, and the CRM sync ingestion of accounts and contacts.

useCrmPlatform();

describe("contacts", () => {
  it("searches first name, last name and email; filters exact email and account", async () => {
    const byFirst = await ok("/contacts?search=grace");
    expect(byFirst.items.map((c: { id: string }) => c.id)).toEqual([cont("grace-hopper")]);
    const byEmail = await ok("/contacts?search=s.ramanujan@");
    expect(byEmail.items.map((c: { id: string }) => c.id)).toEqual([cont("srinivasa-ramanujan")]);
    const exact = await ok("/contacts?email=K.Johnson@orbital.example");
    expect(exact.items.map((c: { id: string }) => c.id)).toEqual([cont("katherine-johnson")]);
    expect((await ok("/contacts?email=johnson@orbital.example")).items).toEqual([]);
    const ofAccount = await ok(`/contacts?accountId=${acct("bletchley")}`);
    expect(ofAccount.items.map((c: { id: string }) => c.id)).toEqual([cont("alan-turing")]);
    await expectProblem("/contacts?accountId=nope", 400, "invalid-filter");
  });

  it("sorts by lastName, firstName, createdAt and updatedAt", async () => {
    const first = (await ok("/contacts?sort=-firstName&limit=100")).items.map((c: { firstName: string }) =>
      c.firstName.toLowerCase(),
    );
    expect(first).toEqual([...first].sort().reverse());
    const last = (await ok("/contacts?sort=lastName&limit=100")).items.map((c: { lastName: string }) =>
      c.lastName.toLowerCase(),
    );
    expect(last).toEqual([...last].sort());
    expect((await ok("/contacts?sort=createdAt&limit=100")).items).toHaveLength(35);
    expect((await ok("/contacts?sort=updatedAt&limit=5")).nextCursor).toEqual(expect.any(String));
    await expectProblem("/contacts?sort=email", 400, "invalid-sort-field");
  });

  it("shows the detail view and the list view", async () => {
    const ada = await ok(`/contacts/${cont("ada-lovelace")}`);
    expect(ada).toEqual({
      id: cont("ada-lovelace"),
      orgId: acme,
      firstName: "Ada",
      lastName: "Lovelace",
      displayName: "Ada Lovelace",
      email: "ada.lovelace@analytical.example",
      phone: "+442079460001",
      title: "Head of Analysis",
      account: { id: acct("analytical"), name: "Analytical Engines Ltd" },
      profileIconUri: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      linkedInUrl: "https://www.linkedin.com/in/ada-lovelace-example",
      summary: expect.any(String),
      sourceRefs: { crm: { id: "SBX-ada-lovelace", url: "https://crm.example/contacts/SBX-ada-lovelace" } },
    });
    const listed = (await ok("/contacts?search=lovelace")).items[0];
    expect(listed).not.toHaveProperty("linkedInUrl");
    expect(listed).not.toHaveProperty("sourceRefs");
  });

  it("answers 404 contact-not-found across orgs", async () => {
    await expectProblem(`/contacts/${cont("umbrella-charlie")}`, 404, "contact-not-found");
    await expectProblem(`/contacts/${cont("umbrella-charlie")}/activity`, 404, "contact-not-found");
    await expectProblem(`/contacts/${acct("analytical")}`, 400, "invalid-resource-id");
    expect((await ok("/contacts", keys["umbrella-full"])).items.map((c: { id: string }) => c.id)).toEqual([
      cont("umbrella-charlie"),
    ]);
  });
});

describe("CRM sync ingestion", () => {
  it("upserts accounts and contacts by CRM id, resolves the parent once it syncs, and repeats idempotently", async () => {
    const admin = crmAdmin();
    const child = await admin.upsertAccounts({
      orgId: acme,
      accounts: [
        {
          crmId: "EXT-CHILD",
          crmUrl: "https://crm.example/EXT-CHILD",
          name: "Zuse KG",
          rootDomain: "Zuse.example",
          parentCrmId: "EXT-PARENT",
          parentName: "Zuse Holding",
          employeeCount: 12,
        },
      ],
    });
    const childId = child.accounts[0]?.id as string;
    expect(child.accounts[0]).toMatchObject({ crmId: "EXT-CHILD", created: true });
    expect((await ok(`/accounts/${childId}`)).parentCompany).toEqual({ id: null, name: "Zuse Holding" });
    const parent = await admin.upsertAccounts({
      orgId: acme,
      accounts: [{ crmId: "EXT-PARENT", name: "Zuse Holding AG" }],
    });
    expect((await ok(`/accounts/${childId}`)).parentCompany).toEqual({
      id: parent.accounts[0]?.id,
      name: "Zuse Holding AG",
    });
    // Synced without a CRM URL: the reference still shows, its url null rather than "".
    expect((await ok(`/accounts/${parent.accounts[0]?.id}`)).sourceRefs).toEqual({
      crm: { id: "EXT-PARENT", url: null },
    });
    expect((await ok("/accounts?domain=zuse.example")).items.map((a: { id: string }) => a.id)).toEqual([childId]);

    const before = await ok(`/accounts/${childId}`);
    clock.advance(60_000);
    const again = await admin.upsertAccounts({
      orgId: acme,
      accounts: [
        {
          crmId: "EXT-CHILD",
          crmUrl: "https://crm.example/EXT-CHILD",
          name: "Zuse KG",
          rootDomain: "Zuse.example",
          parentCrmId: "EXT-PARENT",
          parentName: "Zuse Holding",
          employeeCount: 12,
        },
      ],
    });
    expect(again.accounts[0]).toEqual(expect.objectContaining({ id: childId, created: false }));
    expect((await ok(`/accounts/${childId}`)).updatedAt).toBe(before.updatedAt);

    const contacts = await admin.upsertContacts({
      orgId: acme,
      contacts: [
        {
          crmId: "EXT-KONRAD",
          firstName: "Konrad",
          lastName: "Zuse",
          email: "Konrad@Zuse.example",
          accountCrmId: "EXT-CHILD",
        },
      ],
    });
    const konrad = await ok(`/contacts/${contacts.contacts[0]?.id}`);
    expect(konrad).toMatchObject({ email: "konrad@zuse.example", account: { id: childId, name: "Zuse KG" } });
    expect(konrad.sourceRefs).toEqual({ crm: { id: "EXT-KONRAD", url: null } });
    expect((await ok(`/accounts/${childId}/contacts`)).items).toHaveLength(1);
  });
});
