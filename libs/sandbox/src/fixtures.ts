import {
  sandboxBlastId,
  sandboxDealId,
  sandboxMeetingId,
  sandboxOrgId,
  sandboxScheduleId,
  sandboxSubscriptionId,
  sandboxUserId,
} from "./ids.js";

// The sandbox's notable records by scenario, like the test card numbers of payment APIs:
// which meeting has an expired transcript, which bot failed, which child organization's
// grant was revoked. `platform sandbox fixtures` prints them and the README carries the same
// table (a test keeps the two equal); the runtime's tests call every `path` to prove each
// scenario holds.

/** One notable sandbox record. */
export interface SandboxFixture {
  /** Stable name of the scenario (kebab-case); scripts may key on it. */
  scenario: string;
  /** What a request for `path` shows. */
  description: string;
  /** The resource kind, as the id prefix names it. */
  kind: "organization" | "user" | "schedule" | "meeting" | "deal" | "email-blast" | "webhook-subscription";
  id: string;
  /** The organization the record belongs to (whose key reads it). */
  orgId: string;
  /** A GET request (relative to the API base) that shows the scenario... */
  path: string;
  /** ...made with this sandbox key (`platform sandbox keys`)... */
  key: string;
  /** ...acting on this child organization (`X-Platform-Acting-On`) when set. */
  actingOn: string | null;
}

interface FixtureDefinition {
  scenario: string;
  description: string;
  kind: SandboxFixture["kind"];
  org: string;
  id: (seed: string) => string;
  path: (id: string) => string;
  /** Default acme-full. */
  key?: string;
  /** Whether the partner key acts on the record's org. */
  actingOn?: boolean;
}

const FIXTURES: readonly FixtureDefinition[] = [
  {
    scenario: "organization",
    description: "Acme Corp: 10 seats, 7 used; what the acme-* keys act on",
    kind: "organization",
    org: "acme",
    id: (seed) => sandboxOrgId(seed, "acme"),
    path: (id) => `/organizations/${id}`,
  },
  {
    scenario: "partner-parent",
    description: "Northwind Partners: partner admin of globex and initech",
    kind: "organization",
    org: "northwind",
    id: (seed) => sandboxOrgId(seed, "northwind"),
    path: () => "/partner/managed-organizations",
    key: "northwind-partner",
  },
  {
    scenario: "managed-child",
    description: "Globex: a child that grants Northwind read scopes",
    kind: "organization",
    org: "globex",
    id: (seed) => sandboxOrgId(seed, "globex"),
    path: (id) => `/organizations/${id}`,
    key: "northwind-partner",
    actingOn: true,
  },
  {
    scenario: "child-with-issues",
    description: "Initech: the child a hasActiveIssues filter finds (failed payment)",
    kind: "organization",
    org: "initech",
    id: (seed) => sandboxOrgId(seed, "initech"),
    path: () => "/partner/managed-organizations?hasActiveIssues=true",
    key: "northwind-partner",
  },
  {
    scenario: "revoked-child",
    description: "Hooli: Northwind's grant was revoked; acting on it is refused (403)",
    kind: "organization",
    org: "hooli",
    id: (seed) => sandboxOrgId(seed, "hooli"),
    path: (id) => `/organizations/${id}`,
    key: "northwind-partner",
    actingOn: true,
  },
  {
    scenario: "pending-invitation",
    description: "A user invited 2 days ago (invitationStatus pending)",
    kind: "user",
    org: "acme",
    id: (seed) => sandboxUserId(seed, "acme-pending"),
    path: (id) => `/users/${id}`,
  },
  {
    scenario: "expired-invitation",
    description: "A user invited 20 days ago (invitationStatus expired)",
    kind: "user",
    org: "acme",
    id: (seed) => sandboxUserId(seed, "acme-expired"),
    path: (id) => `/users/${id}`,
  },
  {
    scenario: "deactivated-user",
    description: "A deactivated user (active false)",
    kind: "user",
    org: "acme",
    id: (seed) => sandboxUserId(seed, "acme-deactivated"),
    path: (id) => `/users/${id}`,
  },
  {
    scenario: "routed-schedule",
    description: "An active schedule routed by region (matching form, survey)",
    kind: "schedule",
    org: "acme",
    id: (seed) => sandboxScheduleId(seed, "acme-intro"),
    path: (id) => `/smart-schedules/${id}`,
  },
  {
    scenario: "disabled-schedule",
    description: "A disabled schedule (no availability, booking refused)",
    kind: "schedule",
    org: "acme",
    id: (seed) => sandboxScheduleId(seed, "acme-onboarding"),
    path: (id) => `/smart-schedules/${id}`,
  },
  {
    scenario: "draft-schedule",
    description: "A draft schedule: never served (404 schedule-not-found)",
    kind: "schedule",
    org: "acme",
    id: (seed) => sandboxScheduleId(seed, "acme-renewal"),
    path: (id) => `/smart-schedules/${id}`,
  },
  {
    scenario: "meeting-with-transcript",
    description: "A past meeting with a bilingual transcript (en, de) and word timings",
    kind: "meeting",
    org: "acme",
    id: (seed) => sandboxMeetingId(seed, "acme-intro-completed"),
    path: (id) => `/scheduled-meetings/${id}/transcript`,
  },
  {
    scenario: "meeting-with-chat",
    description: "The same past meeting's chat log",
    kind: "meeting",
    org: "acme",
    id: (seed) => sandboxMeetingId(seed, "acme-intro-completed"),
    path: (id) => `/scheduled-meetings/${id}/chat`,
  },
  {
    scenario: "expired-transcript",
    description: "A recording older than the 12-month retention (410 transcript-expired)",
    kind: "meeting",
    org: "acme",
    id: (seed) => sandboxMeetingId(seed, "acme-archive-2025"),
    path: (id) => `/scheduled-meetings/${id}/transcript`,
  },
  {
    scenario: "failed-bot",
    description: "A meeting whose recording bot failed (status failed, errorReason set)",
    kind: "meeting",
    org: "acme",
    id: (seed) => sandboxMeetingId(seed, "acme-failed-recording"),
    path: (id) => `/scheduled-meetings/${id}/bot`,
  },
  {
    scenario: "canceled-meeting",
    description: "An upcoming meeting that was canceled",
    kind: "meeting",
    org: "acme",
    id: (seed) => sandboxMeetingId(seed, "acme-intro-canceled"),
    path: (id) => `/scheduled-meetings/${id}`,
  },
  {
    scenario: "upcoming-meeting",
    description: "An upcoming meeting with attendee, campaign and survey answers",
    kind: "meeting",
    org: "acme",
    id: (seed) => sandboxMeetingId(seed, "acme-intro-upcoming-amer"),
    path: (id) => `/scheduled-meetings/${id}`,
  },
  {
    scenario: "preview-meeting",
    description: "A meeting booked in preview mode",
    kind: "meeting",
    org: "acme",
    id: (seed) => sandboxMeetingId(seed, "acme-demo-upcoming"),
    path: (id) => `/scheduled-meetings/${id}`,
  },
  {
    scenario: "open-deal",
    description: "An open deal with Q&A, insights and a linked meeting",
    kind: "deal",
    org: "acme",
    id: (seed) => sandboxDealId(seed, "analytical-expansion"),
    path: (id) => `/deals/${id}`,
  },
  {
    scenario: "won-deal",
    description: "A closed deal, won",
    kind: "deal",
    org: "acme",
    id: (seed) => sandboxDealId(seed, "bletchley-cryptanalysis"),
    path: (id) => `/deals/${id}`,
  },
  {
    scenario: "lost-deal",
    description: "A closed deal, lost",
    kind: "deal",
    org: "acme",
    id: (seed) => sandboxDealId(seed, "cobol-migration"),
    path: (id) => `/deals/${id}`,
  },
  {
    scenario: "sending-blast",
    description: "An email blast still sending",
    kind: "email-blast",
    org: "acme",
    id: (seed) => sandboxBlastId(seed, "renewal"),
    path: (id) => `/email-blasts/${id}`,
  },
  {
    scenario: "draft-blast",
    description: "A draft email blast (nothing sent)",
    kind: "email-blast",
    org: "acme",
    id: (seed) => sandboxBlastId(seed, "survey"),
    path: (id) => `/email-blasts/${id}`,
  },
  {
    scenario: "legacy-webhook",
    description: "A disabled subscription with the legacy payload shape",
    kind: "webhook-subscription",
    org: "acme",
    id: (seed) => sandboxSubscriptionId(seed, "acme-legacy"),
    path: (id) => `/webhook-subscriptions/${id}`,
  },
];

/** The notable records of the sandbox seeded with `seed`, in a stable order. */
export function sandboxFixtures(seed: string): SandboxFixture[] {
  return FIXTURES.map((f) => {
    const id = f.id(seed);
    return {
      scenario: f.scenario,
      description: f.description,
      kind: f.kind,
      id,
      orgId: sandboxOrgId(seed, f.org),
      path: f.path(id),
      key: f.key ?? "acme-full",
      actingOn: f.actingOn ? sandboxOrgId(seed, f.org) : null,
    };
  });
}
