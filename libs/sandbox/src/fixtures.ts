import fixtureRows from "./data/fixtures.json" with { type: "json" };
import { sandboxData } from "./data.js";
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

/**
 * One row of data/fixtures.json (see data.ts): the record by its kind and label (its id
 * derives from the seed), the org it belongs to by label, and its path with `{id}` for the
 * record's id.
 */
interface FixtureDefinition {
  scenario: string;
  description: string;
  kind: SandboxFixture["kind"];
  org: string;
  label: string;
  path: string;
  /** Default acme-full. */
  key?: string;
  /** Whether the partner key acts on the record's org. */
  actingOn?: boolean;
}

const FIXTURES = sandboxData<readonly FixtureDefinition[]>(fixtureRows);

/** How each kind's id derives from the seed and the record's label. */
const ID_OF: Record<SandboxFixture["kind"], (seed: string, label: string) => string> = {
  organization: sandboxOrgId,
  user: sandboxUserId,
  schedule: sandboxScheduleId,
  meeting: sandboxMeetingId,
  deal: sandboxDealId,
  "email-blast": sandboxBlastId,
  "webhook-subscription": sandboxSubscriptionId,
};

/** The notable records of the sandbox seeded with `seed`, in a stable order. */
export function sandboxFixtures(seed: string): SandboxFixture[] {
  return FIXTURES.map((f) => {
    const id = ID_OF[f.kind](seed, f.label);
    return {
      scenario: f.scenario,
      description: f.description,
      kind: f.kind,
      id,
      orgId: sandboxOrgId(seed, f.org),
      path: f.path.replace("{id}", id),
      key: f.key ?? "acme-full",
      actingOn: f.actingOn ? sandboxOrgId(seed, f.org) : null,
    };
  });
}
