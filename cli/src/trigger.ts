import type { ApiClient } from "./api-client.js";
import { ApiError } from "./api-client.js";

// `platform trigger <event-type>`: causes a real event of that kind in the caller's org through
// the public API (sandbox data: the org's first active smart schedule), and undoes what it
// booked, so a developer watching `platform listen` sees it arrive and the sandbox stays free.

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

/** The kinds `trigger` can cause, with what it does for each. */
export const TRIGGERS: Record<string, string> = {
  [BOOKED]: "books the first free slot of the org's first active smart schedule, then cancels it",
  [RESCHEDULED]: "books a slot, moves it to a later free slot, then cancels it",
  [CANCELED]: "books a slot, then cancels it",
};

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
