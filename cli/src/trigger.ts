import type { WebhookEventKind } from "@platform/contracts/webhooks";
import type { ApiClient } from "./api-client.js";
import { ApiError } from "./api-client.js";

// `platform trigger <event-type>`: causes a real event of that kind in the caller's org through
// the public API. Scheduling kinds book on the org's first active smart schedule and undo what
// they booked, so the sandbox's calendars stay free; revenue kinds create a deal named as the
// trigger's (the API deletes no deals, Q&As or 8P items) and act on it.

/** One step the trigger took, as printed. */
export interface TriggerStep {
  action: string;
  /** The resource it created or changed. */
  id: string;
  /** The event kind the step emits. */
  emits: string;
}

const BOOKED = "scheduling.smartscheduler.booked";
const RESCHEDULED = "scheduling.smartscheduler.rescheduled";
const CANCELED = "scheduling.smartscheduler.canceled";

const DEAL_CREATED = "revenue.deal.created";
const DEAL_UPDATED = "revenue.deal.updated";
const QNA_CREATED = "revenue.qna.created";
const QNA_UPDATED = "revenue.qna.updated";
const INSIGHT_CREATED = "revenue.insight.created";
const ITEM_APPENDED = "revenue.insight.item-appended";
const SUBSCRIPTION_DISABLED = "webhooks.subscription.disabled";

/** The kinds `trigger` can cause (every kind of the webhook catalog), with what it does for each. */
export const TRIGGERS: Record<string, string> = {
  [BOOKED]: "books the first free slot of the org's first active smart schedule, then cancels it",
  [RESCHEDULED]: "books a slot, moves it to a later free slot, then cancels it",
  [CANCELED]: "books a slot, then cancels it",
  [DEAL_CREATED]: 'creates a deal "Created by platform trigger" on the org\'s first sandbox account',
  [DEAL_UPDATED]: "creates a deal, then changes its name",
  [QNA_CREATED]:
    "creates a deal, its Problem 8P record and a discovery Q&A linked to it (occurrence: a meeting of the org's deals)",
  [QNA_UPDATED]: "as revenue.qna.created, then dismisses the Q&A",
  [INSIGHT_CREATED]: "creates a deal and its Problem 8P record",
  [ITEM_APPENDED]: "creates a deal and its Problem 8P record, then appends an item to it",
  // A real one takes days of failing deliveries: a marked example stands in for it.
  [SUBSCRIPTION_DISABLED]:
    "sends a test example of it (test: true, not in the event log or stream) to each of the org's subscriptions that names it",
} satisfies Record<WebhookEventKind, string>;

/** The scopes the key needs for each group of kinds (the help text and README say the same). */
export const TRIGGER_SCOPES =
  "webhooks.subscription.disabled: webhooks:read, webhooks:write; scheduling kinds: smart-scheduling:read, smart-scheduling:write; revenue.deal.*: accounts:read, deals:read, deals:write; " +
  "revenue.qna.*: those plus qna:write and insights:write; revenue.insight.*: those of deals plus insights:write";

const NOTE = "Created by platform trigger";

interface Field {
  key: string;
  type: string;
  options: string[];
  required: boolean;
}
interface Slot {
  slotToken: string;
  startTime: string;
  endTime: string;
}

/** An answer for every required field of a matching form (the first option of a select). */
export function sampleFormValues(fields: readonly Field[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const f of fields) {
    if (!f.required) continue;
    if (f.type === "select") values[f.key] = f.options[0] ?? "";
    else if (f.type === "multi-select") values[f.key] = f.options.slice(0, 1);
    else if (f.type === "number") values[f.key] = 1;
    else if (f.type === "boolean") values[f.key] = true;
    else values[f.key] = "Sent by platform trigger";
  }
  return values;
}

interface Question {
  label: string;
  required: boolean;
}

/** An answer for every required survey question, keyed by its text as bookings take them. */
export function sampleSurveyResponses(questions: readonly Question[]): Record<string, string> {
  return Object.fromEntries(questions.filter((q) => q.required).map((q) => [q.label, "Sent by platform trigger"]));
}

interface Bookable {
  scheduleName: string;
  formValues: Record<string, unknown>;
  surveyResponses: Record<string, string>;
  slots: Slot[];
}

async function freeSlots(api: ApiClient): Promise<Bookable> {
  const list = await api.request<{ items: { id: string; name: string }[] }>("GET", "/smart-schedules?limit=100");
  for (const schedule of list.items) {
    const detail = await api.request<{ matchingForm: { fields: Field[] }; surveyQuestions: Question[] }>(
      "GET",
      `/smart-schedules/${schedule.id}`,
    );
    const formValues = sampleFormValues(detail.matchingForm.fields);
    let availability: { hostGroups: { slots: Slot[] }[][] };
    try {
      availability = await api.request("POST", `/smart-schedules/${schedule.id}/availability`, { formValues });
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) continue;
      throw err;
    }
    const slots = availability.hostGroups.flatMap((g) => g.flatMap((h) => h.slots));
    if (slots.length > 0) {
      const surveyResponses = sampleSurveyResponses(detail.surveyQuestions ?? []);
      return { scheduleName: schedule.name, formValues, surveyResponses, slots };
    }
  }
  throw new ApiError("no active smart schedule of this organization has a free slot to book");
}

interface Page<T> {
  items: T[];
}
interface DealItem {
  id: string;
  stage: string;
}
interface InsightRecord {
  id: string;
  fields: Record<string, unknown[]>;
}

/**
 * An open stage of the org's deal schema: the stage of its most recently updated deal that is
 * not closed (the schema itself is not part of the public API). Won and Lost are the terminal
 * stages the spec names.
 */
async function openStage(api: ApiClient): Promise<string> {
  const deals = await api.request<Page<DealItem>>("GET", "/deals?limit=100");
  const open = deals.items.find((d) => d.stage !== "Won" && d.stage !== "Lost");
  if (!open) throw new ApiError("no open deal in this organization to take a valid stage from");
  return open.stage;
}

/** A new deal on the org's first sandbox account (POST /deals), recorded as a step. */
async function createDeal(api: ApiClient, record: (s: TriggerStep) => void): Promise<{ id: string; name: string }> {
  const accounts = await api.request<Page<{ id: string; name: string }>>("GET", "/accounts?limit=1&sort=name");
  const account = accounts.items[0];
  if (!account) throw new ApiError("this organization has no account to create a deal on");
  const stage = await openStage(api);
  const deal = await api.request<{ id: string; name: string }>("POST", "/deals", {
    name: NOTE,
    accountId: account.id,
    stage,
  });
  record({
    action: `created deal "${deal.name}" (${stage}) on account "${account.name}"`,
    id: deal.id,
    emits: DEAL_CREATED,
  });
  return deal;
}

/** The Problem 8P record of a deal (POST, idempotent), recorded as a step when new. */
async function createInsight(api: ApiClient, dealId: string, record: (s: TriggerStep) => void): Promise<InsightRecord> {
  const insight = await api.request<InsightRecord>("POST", `/deals/${dealId}/insights/problem`, {});
  record({ action: "created the Problem 8P record", id: insight.id, emits: INSIGHT_CREATED });
  return insight;
}

/** A meeting revenue knows of: the first linked meeting of the org's deals. */
async function someMeeting(api: ApiClient): Promise<string> {
  const deals = await api.request<Page<DealItem>>("GET", "/deals?limit=100");
  for (const deal of deals.items) {
    const meetings = await api.request<Page<{ meetingId?: string; id?: string }>>(
      "GET",
      `/deals/${deal.id}/meetings?limit=1`,
    );
    const m = meetings.items[0];
    if (m) return (m.meetingId ?? m.id) as string;
  }
  throw new ApiError("no deal of this organization has a meeting to attach a Q&A occurrence to");
}

async function triggerRevenue(api: ApiClient, type: string, record: (s: TriggerStep) => void): Promise<void> {
  const deal = await createDeal(api, record);
  if (type === DEAL_UPDATED) {
    const name = `${NOTE} (updated)`;
    await api.request("PATCH", `/deals/${deal.id}`, { name });
    record({ action: `renamed the deal to "${name}"`, id: deal.id, emits: DEAL_UPDATED });
    return;
  }
  if (type === DEAL_CREATED) return;
  const insight = await createInsight(api, deal.id, record);
  // The field keys of the record are the schema's; the first is where the item or Q&A goes.
  const fieldKeys = Object.keys(insight.fields);
  if (type === ITEM_APPENDED) {
    for (const fieldKey of fieldKeys) {
      try {
        await api.request("POST", `/deals/${deal.id}/insights/problem/fields/${fieldKey}`, {
          value: NOTE,
          rationale: NOTE,
        });
      } catch (err) {
        // A field whose type is not text: try the next one.
        if (err instanceof ApiError && err.problem === "insight-field-invalid") continue;
        throw err;
      }
      record({ action: `appended an item to Problem.${fieldKey}`, id: insight.id, emits: ITEM_APPENDED });
      return;
    }
    throw new ApiError("the Problem 8P record has no text field to append an item to");
  }
  if (type === QNA_CREATED || type === QNA_UPDATED) {
    const fieldKey = fieldKeys[0];
    if (!fieldKey) throw new ApiError("the Problem 8P record has no field to link a discovery Q&A to");
    const meetingId = await someMeeting(api);
    const qna = await api.request<{ id: string }>("POST", `/deals/${deal.id}/qnas`, {
      direction: "discovery",
      questionText: `${NOTE}: what problem are you solving?`,
      linkedInsight: { schemaType: "problem", fieldKey },
      occurrences: [{ meetingId, occurredAt: new Date().toISOString() }],
    });
    record({ action: `created a discovery Q&A on the deal (meeting ${meetingId})`, id: qna.id, emits: QNA_CREATED });
    if (type === QNA_UPDATED) {
      await api.request("POST", `/qnas/${qna.id}/transitions/dismissed`, { reason: NOTE });
      record({ action: "dismissed the Q&A", id: qna.id, emits: QNA_UPDATED });
    }
  }
}

/** Sends a marked example of `type` to every subscription of the org that names it. */
async function triggerTestExample(api: ApiClient, type: string, record: (s: TriggerStep) => void): Promise<void> {
  const page = await api.request<{ items: { id: string; events: string[] }[] }>(
    "GET",
    "/webhook-subscriptions?limit=100",
  );
  const receivers = page.items.filter((s) => s.events.includes(type));
  if (receivers.length === 0) throw new ApiError(`no webhook subscription of this organization names ${type}`);
  for (const s of receivers) {
    const delivery = await api.request<{ id: string }>("POST", `/webhook-subscriptions/${s.id}/test`, {
      eventType: type,
    });
    record({ action: `queued a test example to ${s.id}`, id: delivery.id, emits: type });
  }
}

/** Causes `type` in the caller's org and returns the steps it took (each reported through `step` as it happens). */
export async function trigger(api: ApiClient, type: string, step: (s: TriggerStep) => void): Promise<TriggerStep[]> {
  if (!Object.hasOwn(TRIGGERS, type)) {
    throw new ApiError(`cannot trigger '${type}'; supported: ${Object.keys(TRIGGERS).join(", ")}`);
  }
  const steps: TriggerStep[] = [];
  const record = (s: TriggerStep) => {
    steps.push(s);
    step(s);
  };
  if (type.startsWith("revenue.")) {
    await triggerRevenue(api, type, record);
    return steps;
  }
  if (type === SUBSCRIPTION_DISABLED) {
    await triggerTestExample(api, type, record);
    return steps;
  }
  const { scheduleName, formValues, surveyResponses, slots } = await freeSlots(api);
  const [slot] = slots as [Slot];
  const meeting = await api.request<{ id: string; startTime: string }>("POST", "/scheduled-meetings", {
    slotToken: slot.slotToken,
    attendee: { firstName: "Trigger", lastName: "Test", email: "trigger@example.com" },
    formValues,
    surveyResponses,
  });
  record({ action: `booked ${meeting.startTime} on "${scheduleName}"`, id: meeting.id, emits: BOOKED });
  try {
    if (type === RESCHEDULED) {
      const later = slots.find((s) => Date.parse(s.startTime) >= Date.parse(slot.endTime));
      if (!later) throw new ApiError("no later free slot to reschedule to");
      const moved = await api.request<{ startTime: string }>("PATCH", `/scheduled-meetings/${meeting.id}`, {
        slotToken: later.slotToken,
        reason: "Sent by platform trigger",
      });
      record({ action: `rescheduled to ${moved.startTime}`, id: meeting.id, emits: RESCHEDULED });
    }
  } finally {
    // Always freed again, so repeated triggers do not fill the sandbox's calendars.
    await api.request(
      "DELETE",
      `/scheduled-meetings/${meeting.id}?sendNotifications=false&reason=${encodeURIComponent("Sent by platform trigger")}`,
    );
    record({ action: "canceled (no notifications)", id: meeting.id, emits: CANCELED });
  }
  return steps;
}
