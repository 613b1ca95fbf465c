import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { EmailEventRecordedSchema } from "@platform/contracts/events/email";
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
import { type EmailSend, emailSendOf, type MeetingFacts, meetingFacts } from "../domain/activity.js";
import { activityStore } from "../store/activity.store.js";

// What crm-data consumes: scheduling's meeting events (the meetings projection behind the
// timelines and the transcripts) and the email system's sends. The sandbox's meetings come
// the same way (flagged sandbox: state, which a projection takes like any other). Each event
// is applied once per consumer group (consumeOnce), and an older version of a meeting never
// overwrites a newer one, so redelivery and reordering are harmless.

export const ACTIVITY_GROUP = "crm-data-activity";

type Change = { kind: "meeting"; facts: MeetingFacts } | { kind: "email"; send: EmailSend };

const options = { ignoreUnknownFields: true };

function meetingChange(meeting: Meeting | undefined, canceled: boolean, type: string): Change {
  if (!meeting?.startTime || !meeting.endTime || !meeting.updateTime || meeting.id === "" || meeting.orgId === "") {
    throw new Error(`${type} without a complete meeting`);
  }
  const times = {
    start: timestampDate(meeting.startTime),
    end: timestampDate(meeting.endTime),
    updated: timestampDate(meeting.updateTime),
  };
  return { kind: "meeting", facts: meetingFacts(meeting, times, canceled) };
}

/** The projection change an event calls for; undefined for events of no interest; throws on unreadable ones. */
export function changeOf(event: EventEnvelope): Change | undefined {
  const data = event.data as JsonValue;
  switch (event.type) {
    case EVENT_TYPES.meetingBooked:
      return meetingChange(fromJson(MeetingBookedSchema, data, options).meeting, false, event.type);
    case EVENT_TYPES.meetingRescheduled:
      return meetingChange(fromJson(MeetingRescheduledSchema, data, options).meeting, false, event.type);
    case EVENT_TYPES.meetingCanceled:
      return meetingChange(fromJson(MeetingCanceledSchema, data, options).meeting, true, event.type);
    case EVENT_TYPES.emailEventRecorded: {
      const e = fromJson(EmailEventRecordedSchema, data, options);
      const send = emailSendOf(e, e.occurredAt ? timestampDate(e.occurredAt) : undefined);
      return send && { kind: "email", send };
    }
    default:
      return undefined;
  }
}

function project(deps: ConsumerDeps, message: ConsumedMessage): Promise<void> {
  return consumeEvent(deps, ACTIVITY_GROUP, message, changeOf, async (q, change) => {
    const store = activityStore(q);
    if (change.kind === "meeting") await store.projectMeeting(change.facts);
    else await store.recordEmailSend(change.send);
  });
}

/** Subscribes crm-data's projection on `bus`; close the returned subscriptions before the bus. */
export function startCrmConsumers(deps: ConsumerDeps): Promise<Subscription[]> {
  return subscribeGroups(deps.bus, [
    { groupId: ACTIVITY_GROUP, topics: [TOPICS.scheduling, TOPICS.email], handler: (m) => project(deps, m) },
  ]);
}
