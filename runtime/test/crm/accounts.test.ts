import { describe, expect, it } from "vitest";
import { acct, acme, cont, expectProblem, get, keys, ok, tokenWith, useCrmPlatform } from "./setup.js";

// Accounts and their contacts (setup.ts starts the platform).

useCrmPlatform();

describe("accounts", () => {
  it("lists accounts in the list view with explicit nulls, newest update first", async () => {
    const page = await ok("/accounts?limit=100");
    const names = page.items.map((a: { name: string }) => a.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "Analytical Engines Ltd",
        "Babbage Holdings",
        "COBOL Systems",
        "Bletchley Park Labs",
        "Madras Mathematics",
        "Orbital Mechanics Inc",
      ]),
    );
    expect(names).not.toContain("Wonka Industries");
    const madras = page.items.find((a: { name: string }) => a.name === "Madras Mathematics");
    expect(madras).toEqual({
      id: acct("madras"),
      orgId: acme,
      name: "Madras Mathematics",
      rootDomain: "madras.example",
      fullyQualifiedDomain: null,
      primaryIndustry: "Education",
      industries: ["Education"],
      employeeCount: 35,
      primaryLocation: "Chennai, India",
      profileIconUri: null,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    const updated = page.items.map((a: { updatedAt: string }) => a.updatedAt);
    expect([...updated].sort().reverse()).toEqual(updated);
  });

  it("filters by name substring, exact root domain and exact industry", async () => {
    expect((await ok("/accounts?name=ENGINES")).items.map((a: { id: string }) => a.id)).toEqual([acct("analytical")]);
    expect((await ok("/accounts?domain=bletchley.example")).items.map((a: { id: string }) => a.id)).toEqual([
      acct("bletchley"),
    ]);
    // Exact match only: neither the fully qualified domain nor a wildcard matches.
    expect((await ok("/accounts?domain=labs.bletchley.example")).items).toEqual([]);
    expect((await ok("/accounts?domain=*.example")).items).toEqual([]);
    expect((await ok("/accounts?industry=Aerospace")).items.map((a: { id: string }) => a.id)).toEqual([
      acct("orbital"),
    ]);
    // primaryIndustry only, not any of the industries.
    expect((await ok("/accounts?industry=Research")).items.map((a: { id: string }) => a.id)).toEqual([
      acct("bletchley"),
    ]);
  });

  it("sorts by name, employeeCount, createdAt and updatedAt both ways", async () => {
    const byName = (await ok("/accounts?sort=name")).items.map((a: { name: string }) => a.name);
    expect(byName).toEqual([...byName].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
    const counts = (await ok("/accounts?sort=-employeeCount")).items.map(
      (a: { employeeCount: number }) => a.employeeCount,
    );
    expect(counts[0]).toBe(5200);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    const asc = (await ok("/accounts?sort=employeeCount")).items.map((a: { employeeCount: number }) => a.employeeCount);
    expect(asc[0]).toBe(35);
    for (const sort of ["createdAt", "-createdAt", "updatedAt"]) {
      expect((await ok(`/accounts?sort=${sort}`)).items).toHaveLength(6);
    }
    const bad = await expectProblem("/accounts?sort=domain", 400, "invalid-sort-field");
    expect(bad.allowedSortFields).toEqual(["updatedAt", "createdAt", "name", "employeeCount"]);
  });

  it("pages with signed cursors bound to the sort", async () => {
    const first = await ok("/accounts?sort=name&limit=4");
    expect(first.items).toHaveLength(4);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await ok(`/accounts?sort=name&limit=4&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(second.items).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
    const all = [...first.items, ...second.items].map((a: { name: string }) => a.name);
    expect(new Set(all).size).toBe(6);
    await expectProblem(`/accounts?sort=-name&cursor=${encodeURIComponent(first.nextCursor)}`, 400, "invalid-cursor");
    await expectProblem(
      `/accounts?sort=name&cursor=${encodeURIComponent(`${first.nextCursor}x`)}`,
      400,
      "invalid-cursor",
    );
    await expectProblem("/accounts?limit=many", 400, "invalid-field");
  });

  it("shows the detail view: valuation, funding, tracked and untracked parents, summary, sourceRefs", async () => {
    const analytical = await ok(`/accounts/${acct("analytical")}`);
    expect(analytical).toMatchObject({
      id: acct("analytical"),
      valuation: { amount: 420_000_000, currency: "GBP", asOf: "2026-01-15" },
      funding: {
        totalRaised: 96_000_000,
        currency: "GBP",
        lastRound: { series: "Series C", amount: 60_000_000, closedOn: "2025-09-30" },
      },
      parentCompany: { id: acct("babbage"), name: "Babbage Holdings" },
      summary: expect.any(String),
      sourceRefs: { crm: { id: "SBX-analytical", url: "https://crm.example/accounts/SBX-analytical" } },
    });
    const bletchley = await ok(`/accounts/${acct("bletchley")}`);
    expect(bletchley.parentCompany).toEqual({ id: null, name: "Government Code and Cypher School" });
    expect(bletchley.valuation).toBeNull();
    expect(bletchley.funding).toBeNull();
    const madras = await ok(`/accounts/${acct("madras")}`);
    expect(madras.parentCompany).toBeNull();
    expect(madras.summary).toBeNull();
  });

  it("answers 404 account-not-found for unknown and other orgs' accounts, 400 for malformed ids", async () => {
    await expectProblem(`/accounts/${acct("nope")}`, 404, "account-not-found");
    await expectProblem(`/accounts/${acct("umbrella-wonka")}`, 404, "account-not-found");
    expect((await ok(`/accounts/${acct("umbrella-wonka")}`, keys["umbrella-full"])).name).toBe("Wonka Industries");
    await expectProblem(`/accounts/${cont("ada-lovelace")}`, 400, "invalid-resource-id");
    await expectProblem(`/accounts/${acct("nope")}/activity`, 404, "account-not-found");
    await expectProblem(`/accounts/${acct("umbrella-wonka")}/contacts`, 404, "account-not-found");
  });

  it("needs accounts:read", async () => {
    const problem = await expectProblem("/accounts", 403, "insufficient-scope", await tokenWith(["contacts:read"]));
    expect(problem.requiredScope).toBe("accounts:read");
  });
});

describe("account contacts", () => {
  it("lists the account's contacts with search, sorts and pages", async () => {
    const all = await ok(`/accounts/${acct("analytical")}/contacts?limit=100`);
    expect(all.items).toHaveLength(31);
    expect(all.items.every((c: { account: { id: string } }) => c.account.id === acct("analytical"))).toBe(true);
    const ada = await ok(`/accounts/${acct("analytical")}/contacts?search=lovelace`);
    expect(ada.items.map((c: { id: string }) => c.id)).toEqual([cont("ada-lovelace")]);
    const page = await ok(`/accounts/${acct("analytical")}/contacts?limit=20&sort=lastName`);
    expect(page.items).toHaveLength(20);
    expect(page.nextCursor).toEqual(expect.any(String));
    const last = page.items.map((c: { lastName: string }) => c.lastName.toLowerCase());
    expect(last).toEqual([...last].sort());
    // Another account's contacts never show, search or not.
    expect((await ok(`/accounts/${acct("cobol")}/contacts?search=lovelace`)).items).toEqual([]);
  });

  it("needs both scopes: a token lacking accounts:read gets 403 with requiredScope accounts:read", async () => {
    const contactsOnly = await tokenWith(["contacts:read"]);
    const p = await expectProblem(`/accounts/${acct("analytical")}/contacts`, 403, "insufficient-scope", contactsOnly);
    expect(p.requiredScope).toBe("accounts:read");
    const accountsOnly = await tokenWith(["accounts:read"]);
    const q = await expectProblem(`/accounts/${acct("analytical")}/contacts`, 403, "insufficient-scope", accountsOnly);
    expect(q.requiredScope).toBe("contacts:read");
    const neither = await tokenWith(["transcripts:read"]);
    const r = await expectProblem(`/accounts/${acct("analytical")}/contacts`, 403, "insufficient-scope", neither);
    expect(r.requiredScope).toBe("accounts:read");
    const both = await tokenWith(["contacts:read", "accounts:read"]);
    expect((await get(`/accounts/${acct("analytical")}/contacts`, both)).statusCode).toBe(200);
  });
});
