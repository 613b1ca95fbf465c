import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AccountChangedSchema, ContactChangedSchema } from "@platform/contracts/events/crm";
import { OrganizationUpdatedSchema, UserUpdatedSchema } from "@platform/contracts/events/identity";
import {
  MeetingBookedSchema,
  MeetingCanceledSchema,
  MeetingRescheduledSchema,
} from "@platform/contracts/events/scheduling";
import type { Meeting } from "@platform/contracts/scheduling";
import type { ConsumedMessage, Subscription } from "@platform/kit/bus";
import { type ConsumerDeps, subscribeGroups } from "@platform/kit/consumer";
import { consumeEvent } from "@platform/kit/event-consumer";
import { EVENT_TYPES, type EventEnvelope, TOPICS } from "@platform/kit/events";
import type { MeetingRecord } from "../domain/model.js";
import { meetingStore } from "../store/meeting.store.js";
import { type ReferenceStore, referenceStore } from "../store/references.store.js";

// What revenue consumes: scheduling's meeting events, projected into revenue.meetings (preview
// bookings included, flagged). Deal links are not decided here but at read time from the
// attendee emails, so a contact created after its meeting still links it. The group starts
// from the earliest retained event, and consumeOnce makes redelivery harmless; the projection
// keeps the newest event's view.

export const MEETINGS_GROUP = "revenue-meetings";
/** crm-data's account/contact changes and identity's user/org changes, into the reference projections. */
export const REFERENCES_GROUP = "revenue-references";

const options = { ignoreUnknownFields: true };

type Change = { kind: "upsert" | "cancel"; meeting: Meeting };

function changeOf(event: EventEnvelope): Change | undefined {
  const data = event.data as JsonValue;
  let change: Change | undefined;
  switch (event.type) {
    case EVENT_TYPES.meetingBooked: {
      const { meeting } = fromJson(MeetingBookedSchema, data, options);
      change = meeting && { kind: "upsert", meeting };
      break;
    }
    case EVENT_TYPES.meetingRescheduled: {
      const { meeting } = fromJson(MeetingRescheduledSchema, data, options);
      change = meeting && { kind: "upsert", meeting };
      break;
    }
    case EVENT_TYPES.meetingCanceled: {
      const { meeting } = fromJson(MeetingCanceledSchema, data, options);
      change = meeting && { kind: "cancel", meeting };
      break;
    }
    default:
      return undefined;
  }
  if (!change) throw new Error(`${event.type} without its meeting`);
  return change;
}

export function meetingRecordOf(m: Meeting): MeetingRecord {
  if (!m.startTime || !m.endTime || !m.attendee) throw new Error(`meeting ${m.id} without its times or attendee`);
  const emails = [m.attendee.email, ...m.additionalAttendees].map((e) => e.toLowerCase());
  return {
    id: m.id,
    orgId: m.orgId,
    title: m.title,
    start: timestampDate(m.startTime),
    end: timestampDate(m.endTime),
    canceled: m.status === "canceled",
    // Kept, not skipped: a preview booking is still a meeting that Q&As and insights may name;
    // only the deal links (the CRM-sync side) leave it out.
    preview: m.smartScheduling?.preview ?? false,
    attendeeEmails: [...new Set(emails)],
  };
}

/** The projected meeting of an event and what to do with it; throws on a meeting it cannot keep. */
function meetingChangeOf(event: EventEnvelope): { kind: Change["kind"]; meeting: MeetingRecord } | undefined {
  const change = changeOf(event);
  return change && { kind: change.kind, meeting: meetingRecordOf(change.meeting) };
}

function project(deps: ConsumerDeps, message: ConsumedMessage): Promise<void> {
  return consumeEvent(deps, MEETINGS_GROUP, message, meetingChangeOf, async (q, { kind, meeting }, event) => {
    const at = new Date(event.time);
    const w = meetingStore(q);
    if (kind === "cancel") await w.cancelMeeting(meeting, at);
    else await w.upsertMeeting(meeting, at);
  });
}

// identity's events name what changed, not the new values: the fields that alter what revenue
// keeps of a user (their display name) drop it, so the next write naming them reads through.
const USER_NAME_FIELDS = new Set(["firstName", "lastName", "displayName", "email"]);

/** The projection change an event asks for, or undefined for events revenue does not keep. */
function referenceChangeOf(event: EventEnvelope): ((r: ReferenceStore, at: Date) => Promise<void>) | undefined {
  const data = event.data as JsonValue;
  switch (event.type) {
    case EVENT_TYPES.accountChanged: {
      const a = fromJson(AccountChangedSchema, data, options);
      return (r, at) => r.putAccount(a.orgId, { id: a.accountId, name: a.name }, at);
    }
    case EVENT_TYPES.contactChanged: {
      const c = fromJson(ContactChangedSchema, data, options);
      const ref = { id: c.contactId, accountId: c.accountId, displayName: c.displayName, email: c.email };
      return (r, at) => r.putContact(c.orgId, ref, at);
    }
    case EVENT_TYPES.userUpdated: {
      const u = fromJson(UserUpdatedSchema, data, options);
      if (!u.changedFields.some((f) => USER_NAME_FIELDS.has(f))) return undefined;
      return (r) => r.forgetUser(u.userId);
    }
    case EVENT_TYPES.organizationUpdated: {
      const o = fromJson(OrganizationUpdatedSchema, data, options);
      if (!o.changedFields.some((f) => f.startsWith("administrator"))) return undefined;
      return (r) => r.forgetOrganization(o.orgId);
    }
    default:
      return undefined;
  }
}

function projectReference(deps: ConsumerDeps, message: ConsumedMessage): Promise<void> {
  return consumeEvent(deps, REFERENCES_GROUP, message, referenceChangeOf, (q, apply, event) =>
    apply(referenceStore(q), new Date(event.time)),
  );
}

/** Subscribes revenue's consumers on `bus`; close the returned subscriptions before the bus. */
export function startRevenueConsumers(deps: ConsumerDeps): Promise<Subscription[]> {
  return subscribeGroups(deps.bus, [
    { groupId: MEETINGS_GROUP, topics: [TOPICS.scheduling], handler: (m) => project(deps, m) },
    { groupId: REFERENCES_GROUP, topics: [TOPICS.crm, TOPICS.identity], handler: (m) => projectReference(deps, m) },
  ]);
}
