import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { CrmAdminService } from "@platform/contracts/crm";
import { EmailEventKind, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { IdentityAdminService } from "@platform/contracts/identity";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { toBusMessage } from "@platform/kit/outbox";
import { sandboxAccountId, sandboxContactId, sandboxMeetingId, sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";

// crm-data end to end on the embedded platform: gateway → crm-data → PGlite, the timeline
// projection fed by scheduling's and the email system's events over the in-process bus.
const DOCS = "https://docs.crm-test.example";
const API = "/api/v1alpha1";
const SEED = "crm-api-test";
const ADMIN_SECRET = "crm-api-test-admin-secret";
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));

let platform: EmbeddedPlatform;
const keys: Record<string, string> = {};
let n = 0;

const acme = sandboxOrgId(SEED, "acme");
const acct = (key: string) => sandboxAccountId(SEED, key);
const cont = (key: string) => sandboxContactId(SEED, key);
const mtg = (label: string) => sandboxMeetingId(SEED, label);
const problemType = (name: string) => `${DOCS}/platform-api/errors/${name}`;

function call(method: "GET" | "POST" | "PATCH" | "DELETE", url: string, key = keys["acme-full"], body?: unknown) {
  return platform.app.inject({
    method,
    url: `${API}${url}`,
    headers: {
      "x-platform-api-key": key as string,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method === "POST" || method === "PATCH" ? { "idempotency-key": `crm-${++n}` } : {}),
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}
const get = (url: string, key?: string) => call("GET", url, key);
const ok = async (url: string, key?: string) => {
  const res = await get(url, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
async function expectProblem(url: string, status: number, name: string, key?: string) {
  const res = await get(url, key);
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toContain("application/problem+json");
  expect(res.json().type).toBe(problemType(name));
  return res.json();
}

const adminTransport = () =>
  httpTransport(`http://127.0.0.1:${platform.admin?.port}`, [adminClientInterceptor(ADMIN_SECRET)]);
const identityAdmin = () => createClient(IdentityAdminService, adminTransport());
const crmAdmin = () => createClient(CrmAdminService, adminTransport());

async function tokenWith(scopes: string[]): Promise<string> {
  return (await identityAdmin().createToken({ orgId: acme, scopes })).key;
}

async function settle() {
  await platform.drainOutbox();
  await platform.bus.idle();
}

beforeAll(async () => {
  platform = await createEmbeddedPlatform({
    clock,
    logger: createLogger("crm-api-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS, LOG_LEVEL: "silent" }),
    sandboxSeed: SEED,
    seedSandbox: true,
    adminSecret: ADMIN_SECRET,
    adminPort: 0,
  });
  for (const k of await platform.sandboxKeys()) keys[k.name] = k.key;
  // The sandbox's meetings reach the projection as scheduling's events.
  await settle();
});
afterAll(() => platform.close());
// Past the per-minute read limit of the sandbox keys between tests.
beforeEach(() => clock.advance(61_000));

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

describe("activity timelines", () => {
  it("puts the sandbox meeting and the email sends on the contact's and the account's timeline", async () => {
    const ada = await ok(`/contacts/${cont("ada-lovelace")}/activity?limit=100`);
    const meeting = ada.items.find((i: { type: string }) => i.type === "meeting");
    expect(meeting).toEqual({
      type: "meeting",
      occurredAt: expect.stringMatching(/Z$/),
      reference: { id: mtg("acme-intro-completed"), title: expect.any(String), hostName: "Blake Rivera" },
    });
    const emails = ada.items.filter((i: { type: string }) => i.type === "email");
    expect(emails).toHaveLength(6);
    expect(emails[0].reference).toEqual({ subject: expect.any(String), senderName: expect.any(String) });
    const times = ada.items.map((i: { occurredAt: string }) => i.occurredAt);
    expect(times).toEqual([...times].sort().reverse());
    const account = await ok(`/accounts/${acct("analytical")}/activity?limit=100`);
    expect(account.items).toEqual(ada.items);
  });

  it("filters by type (repeatable), since, and sorts by occurredAt", async () => {
    const url = `/contacts/${cont("ada-lovelace")}/activity`;
    expect((await ok(`${url}?type=meeting`)).items.map((i: { type: string }) => i.type)).toEqual(["meeting"]);
    expect(new Set((await ok(`${url}?type=email`)).items.map((i: { type: string }) => i.type))).toEqual(
      new Set(["email"]),
    );
    expect((await ok(`${url}?type=meeting&type=email&limit=100`)).items).toHaveLength(7);
    const since = new Date(clock.now().getTime() - 10 * 86_400_000).toISOString();
    const recent = await ok(`${url}?since=${since}`);
    expect(recent.items.length).toBeGreaterThan(0);
    expect(recent.items.every((i: { occurredAt: string }) => i.occurredAt >= since)).toBe(true);
    expect(recent.items.length).toBeLessThan(7);
    const asc = (await ok(`${url}?sort=occurredAt&limit=100`)).items.map((i: { occurredAt: string }) => i.occurredAt);
    expect(asc).toEqual([...asc].sort());
    const paged = await ok(`${url}?limit=3`);
    expect(paged.items).toHaveLength(3);
    const rest = await ok(`${url}?limit=100&cursor=${encodeURIComponent(paged.nextCursor)}`);
    expect(rest.items).toHaveLength(4);
    await expectProblem(`${url}?type=call`, 400, "invalid-filter");
    await expectProblem(`${url}?since=yesterday`, 400, "invalid-filter");
    await expectProblem(`${url}?sort=type`, 400, "invalid-sort-field");
  });

  it("looks back 12 months by default; older email sends need since", async () => {
    const old = create(EmailEventRecordedSchema, {
      eventId: "crm-api-test-old-send",
      orgId: acme,
      kind: EmailEventKind.SEND,
      occurredAt: timestampFromDate(new Date(clock.now().getTime() - 400 * 86_400_000)),
      messageId: "msg-old",
      recipientEmail: "GRACE.HOPPER@cobol.example",
      subject: "Catching up after a year",
      senderDisplayName: "Casey Nguyen",
    });
    const envelope = {
      id: old.eventId,
      type: EVENT_TYPES.emailEventRecorded,
      source: "email-system",
      time: clock.now().toISOString(),
      data: toJson(EmailEventRecordedSchema, old),
    };
    // Delivered twice: the projection is idempotent by event id.
    await platform.bus.publish(TOPICS.email, [toBusMessage(envelope, acme), toBusMessage(envelope, acme)]);
    await platform.bus.idle();
    const url = `/contacts/${cont("grace-hopper")}/activity?type=email&limit=100`;
    const subjects = (await ok(url)).items.map((i: { reference: { subject: string } }) => i.reference.subject);
    expect(subjects).not.toContain("Catching up after a year");
    const all = (await ok(`${url}&since=2024-01-01`)).items.map(
      (i: { reference: { subject: string } }) => i.reference.subject,
    );
    expect(all.filter((s: string) => s === "Catching up after a year")).toHaveLength(1);
    const account = await ok(`/accounts/${acct("cobol")}/activity?type=email&since=2024-01-01T00:00:00Z&limit=100`);
    expect(account.items).toHaveLength(7);
  });

  it("keeps canceled and preview meetings off the timelines", async () => {
    const grace = await ok(`/contacts/${cont("grace-hopper")}/activity?type=meeting`);
    expect(grace.items).toEqual([]);
    const katherine = await ok(`/contacts/${cont("katherine-johnson")}/activity?type=meeting`);
    expect(katherine.items).toEqual([]);
    const alan = await ok(`/contacts/${cont("alan-turing")}/activity?type=meeting`);
    expect(alan.items.map((i: { reference: { id: string } }) => i.reference.id)).toEqual([
      mtg("acme-intro-upcoming-amer"),
    ]);
  });

  it("shows a meeting booked through the gateway on the contact's and the account's timeline, moves and drops it", async () => {
    const attendeeEmail = "charles.babbage.1@analytical.example";
    const contact = (await ok(`/contacts?email=${attendeeEmail}`)).items[0];
    expect(contact.account.id).toBe(acct("analytical"));
    const schedules = await ok("/smart-schedules?name=intro");
    const scheduleId = schedules.items[0].id as string;
    const detail = await ok(`/smart-schedules/${scheduleId}`);
    const region = detail.matchingForm.fields.find((f: { key: string }) => f.key === "region");
    const formValues = { region: region.options[0] };
    const availability = await call("POST", `/smart-schedules/${scheduleId}/availability`, keys["acme-full"], {
      formValues,
    });
    expect(availability.statusCode, availability.body).toBe(200);
    const slots = availability
      .json()
      .hostGroups.flat()
      .flatMap((h: { slots: { slotToken: string; startTime: string }[] }) => h.slots);
    expect(slots.length).toBeGreaterThan(1);
    const booked = await call("POST", "/scheduled-meetings", keys["acme-full"], {
      slotToken: slots[0].slotToken,
      attendee: { firstName: "Charles", lastName: "Babbage", email: attendeeEmail.toUpperCase() },
      formValues,
      surveyResponses: { "What would you like to discuss?": "Difference engines" },
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const meeting = booked.json();
    await settle();

    const onContact = await ok(`/contacts/${contact.id}/activity?type=meeting`);
    expect(onContact.items).toEqual([
      {
        type: "meeting",
        occurredAt: meeting.startTime,
        reference: { id: meeting.id, title: meeting.title, hostName: meeting.host.displayName },
      },
    ]);
    const onAccount = await ok(`/accounts/${acct("analytical")}/activity?type=meeting`);
    expect(onAccount.items.map((i: { reference: { id: string } }) => i.reference.id)).toContain(meeting.id);

    // A reschedule moves the item.
    const later = slots.find(
      (s: { startTime: string }) => s.startTime > meeting.startTime && s.startTime >= meeting.endTime,
    );
    const moved = await call("PATCH", `/scheduled-meetings/${meeting.id}`, keys["acme-full"], {
      slotToken: later.slotToken,
    });
    expect(moved.statusCode, moved.body).toBe(200);
    await settle();
    const afterMove = await ok(`/contacts/${contact.id}/activity?type=meeting`);
    expect(afterMove.items.map((i: { occurredAt: string }) => i.occurredAt)).toEqual([moved.json().startTime]);

    // A cancellation takes it off the timelines.
    expect((await call("DELETE", `/scheduled-meetings/${meeting.id}`)).statusCode).toBe(204);
    await settle();
    expect((await ok(`/contacts/${contact.id}/activity?type=meeting`)).items).toEqual([]);
    const afterCancel = await ok(`/accounts/${acct("analytical")}/activity?type=meeting`);
    expect(afterCancel.items.map((i: { reference: { id: string } }) => i.reference.id)).not.toContain(meeting.id);
  });
});

describe("transcripts", () => {
  const base = (label: string) => `/scheduled-meetings/${mtg(label)}`;

  it("returns the full transcript: chunks with words, full duration, compiledText", async () => {
    const t = await ok(`${base("acme-intro-completed")}/transcript`);
    expect(t.meetingId).toBe(mtg("acme-intro-completed"));
    expect(t.botId).toMatch(/^trs_/);
    expect(t.durationSeconds).toBe(1799);
    expect(t.windowStart).toBe(0);
    expect(t.windowEnd).toBe(1799);
    expect(t.chunks).toHaveLength(120);
    const [first] = t.chunks;
    expect(first).toEqual({
      chunkId: expect.stringMatching(/^chnk_/),
      speaker: "Blake Rivera",
      hostId: expect.stringMatching(/^usr_/),
      language: "en",
      startTime: 0,
      endTime: 14,
      text: expect.any(String),
      words: expect.arrayContaining([{ text: expect.any(String), startTime: 0, endTime: expect.any(Number) }]),
      isFinal: true,
    });
    expect(t.chunks[1].hostId).toBeNull();
    expect(t.compiledText.split("\n")).toHaveLength(120);
    expect(t.compiledText.split("\n")[0]).toBe(`Blake Rivera: ${first.text}`);
  });

  it("windows by startTime/endTime and filters by language, durationSeconds staying the full length", async () => {
    const t = await ok(`${base("acme-intro-completed")}/transcript?startTime=60&endTime=120`);
    expect(t.windowStart).toBe(60);
    expect(t.windowEnd).toBe(120);
    expect(t.durationSeconds).toBe(1799);
    expect(t.chunks.map((c: { startTime: number }) => c.startTime)).toEqual([60, 75, 90, 105]);
    const de = await ok(`${base("acme-intro-completed")}/transcript?language=de`);
    expect(de.chunks).toHaveLength(40);
    expect(de.chunks.every((c: { language: string }) => c.language === "de")).toBe(true);
    expect(de.durationSeconds).toBe(1799);
    expect(de.compiledText.split("\n").every((l: string) => l.startsWith("Johanna Weber: "))).toBe(true);
    const end = await ok(`${base("acme-intro-completed")}/transcript?startTime=1700`);
    expect(end.windowEnd).toBe(1799);
  });

  it("rejects bad windows with 422 transcript-window-invalid", async () => {
    await expectProblem(
      `${base("acme-intro-completed")}/transcript?startTime=200&endTime=100`,
      422,
      "transcript-window-invalid",
    );
    await expectProblem(`${base("acme-intro-completed")}/transcript?endTime=5000`, 422, "transcript-window-invalid");
    await expectProblem(`${base("acme-intro-completed")}/transcript?startTime=abc`, 400, "invalid-field");
  });

  it("answers meeting-not-found, transcript-not-available and transcript-expired", async () => {
    await expectProblem(`${base("nope")}/transcript`, 404, "meeting-not-found");
    await expectProblem(`${base("acme-intro-completed")}/transcript`, 404, "meeting-not-found", keys["umbrella-full"]);
    await expectProblem(`${base("acme-intro-upcoming-amer")}/transcript`, 404, "transcript-not-available");
    await expectProblem(`${base("acme-failed-recording")}/transcript`, 404, "transcript-not-available");
    await expectProblem(`${base("acme-archive-2025")}/transcript`, 410, "transcript-expired");
    await expectProblem(`${base("acme-archive-2025")}/transcript/chunks`, 410, "transcript-expired");
    await expectProblem(`${base("acme-archive-2025")}/chat`, 410, "transcript-expired");
    await expectProblem(`${base("acme-intro-upcoming-amer")}/chat`, 404, "transcript-not-available");
    // The failed bot recorded nothing, so its chat has the transcript's error too.
    await expectProblem(`${base("acme-failed-recording")}/chat`, 404, "transcript-not-available");
    await expectProblem(`/scheduled-meetings/${acct("x")}/transcript`, 400, "invalid-resource-id");
  });

  it("lists chunks without words, with meetingId, filtered by language, speaker and hostId", async () => {
    const url = `${base("acme-intro-completed")}/transcript/chunks`;
    const page = await ok(url);
    expect(page.items).toHaveLength(25);
    expect(page.items[0]).toEqual({
      chunkId: expect.stringMatching(/^chnk_/),
      meetingId: mtg("acme-intro-completed"),
      speaker: "Blake Rivera",
      hostId: expect.stringMatching(/^usr_/),
      language: "en",
      startTime: 0,
      endTime: 14,
      text: expect.any(String),
      isFinal: true,
    });
    const hostId = page.items[0].hostId as string;
    const starts = page.items.map((c: { startTime: number }) => c.startTime);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    const desc = await ok(`${url}?sort=-startTime&limit=2`);
    expect(desc.items.map((c: { startTime: number }) => c.startTime)).toEqual([1785, 1770]);
    const next = await ok(`${url}?sort=-startTime&limit=2&cursor=${encodeURIComponent(desc.nextCursor)}`);
    expect(next.items.map((c: { startTime: number }) => c.startTime)).toEqual([1755, 1740]);
    const ada = await ok(`${url}?speaker=LOVELACE&limit=100`);
    expect(ada.items).toHaveLength(40);
    const de = await ok(`${url}?language=de&limit=100`);
    expect(de.items.every((c: { speaker: string }) => c.speaker === "Johanna Weber")).toBe(true);
    const host = await ok(`${url}?hostId=${hostId}&limit=100`);
    expect(host.items).toHaveLength(40);
    expect((await ok(`${url}?language=fr`)).items).toEqual([]);
    await expectProblem(`${url}?sort=speaker`, 400, "invalid-sort-field");
    await expectProblem(`${url}?hostId=blake`, 400, "invalid-filter");
    await expectProblem(`${url}?cursor=${encodeURIComponent(desc.nextCursor)}`, 400, "invalid-cursor");
  });

  it("lists chat, private messages only when the bot's owner was a party", async () => {
    const url = `${base("acme-intro-completed")}/chat`;
    const chat = await ok(url);
    expect(chat.items.map((m: { text: string }) => m.text)).toEqual([
      "Welcome! The agenda is in the invite.",
      "Could you share the pricing sheet?",
      "Off the record: budget is approved.",
      "Thanks all, follow-up by email.",
    ]);
    expect(chat.items[2]).toEqual({
      messageId: expect.stringMatching(/^chat_/),
      meetingId: mtg("acme-intro-completed"),
      sender: "Ada Lovelace",
      hostId: null,
      sentAt: expect.stringMatching(/Z$/),
      text: "Off the record: budget is approved.",
      recipients: "private",
    });
    const first = await ok(`${url}?limit=3`);
    expect(first.items).toHaveLength(3);
    const rest = await ok(`${url}?limit=3&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(rest.items.map((m: { text: string }) => m.text)).toEqual(["Thanks all, follow-up by email."]);
    expect(rest.nextCursor).toBeNull();
    await expectProblem(`${url}?sort=sentAt`, 400, "invalid-sort-field");
  });

  it("shows the bot status, errorReason when failed, 404 bot-not-configured without a bot", async () => {
    const done = await ok(`${base("acme-intro-completed")}/bot`);
    expect(done).toEqual({
      botId: expect.stringMatching(/^trs_/),
      meetingId: mtg("acme-intro-completed"),
      status: "done",
      startedAt: expect.any(String),
      endedAt: expect.any(String),
      joinUrl: expect.any(String),
      provider: "video_a",
      recordingAvailable: true,
      transcriptChunksAvailable: 120,
      errorReason: null,
    });
    const failed = await ok(`${base("acme-failed-recording")}/bot`);
    expect(failed.status).toBe("failed");
    expect(failed.errorReason).toMatch(/waiting room/);
    expect(failed.transcriptChunksAvailable).toBe(0);
    await expectProblem(`${base("acme-intro-upcoming-amer")}/bot`, 404, "bot-not-configured");
    await expectProblem(`${base("nope")}/bot`, 404, "meeting-not-found");
    const p = await expectProblem(
      `${base("acme-intro-completed")}/bot`,
      403,
      "insufficient-scope",
      await tokenWith(["accounts:read"]),
    );
    expect(p.requiredScope).toBe("transcripts:read");
  });

  it("streams a recording through the ingestion plane; it expires 12 months after the meeting end, by the clock", async () => {
    const meetingId = mtg("acme-intro-upcoming-apac");
    const end = new Date(clock.now().getTime() + 3 * 86_400_000);
    const admin = crmAdmin();
    const status = await admin.updateBotStatus({
      orgId: acme,
      meetingId,
      botId: newId("trs_"),
      ownerUserId: "",
      status: "recording",
      joinUrl: "https://meet.example/apac",
      provider: "video_a",
    });
    expect(status.bot?.status).toBe("recording");
    await expectProblem(`${base("acme-intro-upcoming-apac")}/transcript`, 404, "transcript-not-available");
    const appended = await admin.appendTranscriptChunks({
      orgId: acme,
      meetingId,
      chunks: [
        {
          sequence: 0,
          speaker: "Srinivasa Ramanujan",
          language: "en",
          startTime: 0,
          endTime: 4,
          text: "Hello",
          words: [{ text: "Hello", startTime: 0, endTime: 1 }],
        },
        { sequence: 1, speaker: "Devon Park", language: "en", startTime: 4, endTime: 9, text: "Welcome" },
      ],
    });
    expect(appended).toMatchObject({ appended: 2, total: 2 });
    // Repeating a batch stores nothing twice.
    expect(
      (
        await admin.appendTranscriptChunks({
          orgId: acme,
          meetingId,
          chunks: [{ sequence: 1, speaker: "Devon Park", language: "en", startTime: 4, endTime: 9, text: "Welcome" }],
        })
      ).appended,
    ).toBe(0);
    const t = await ok(`${base("acme-intro-upcoming-apac")}/transcript`);
    expect(t.compiledText).toBe("Srinivasa Ramanujan: Hello\nDevon Park: Welcome");
    expect((await ok(`${base("acme-intro-upcoming-apac")}/bot`)).transcriptChunksAvailable).toBe(2);

    const saved = clock.now();
    const meeting = (await ok(`/scheduled-meetings/${meetingId}`)).endTime as string;
    expect(new Date(meeting).getTime()).toBeLessThan(end.getTime());
    clock.set(new Date(new Date(meeting).getTime() + 365 * 86_400_000 - 60_000));
    expect((await get(`${base("acme-intro-upcoming-apac")}/transcript`)).statusCode).toBe(200);
    clock.advance(61_000 + 86_400_000);
    await expectProblem(`${base("acme-intro-upcoming-apac")}/transcript`, 410, "transcript-expired");
    clock.set(new Date(saved.getTime() + 61_000));
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
