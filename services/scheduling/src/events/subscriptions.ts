import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  MeetingBookedSchema,
  MeetingCanceledSchema,
  MeetingRescheduledSchema,
} from "@platform/contracts/events/scheduling";
import type { Meeting } from "@platform/contracts/scheduling";
import type { ConsumedMessage, Subscription } from "@platform/kit/bus";
import { type ConsumerDeps as KitConsumerDeps, subscribeGroups } from "@platform/kit/consumer";
import type { Queryable } from "@platform/kit/db";
import { consumeEvent } from "@platform/kit/event-consumer";
import { EVENT_TYPES, type EventEnvelope, TOPICS } from "@platform/kit/events";
import type { Notice, NoticeKind, Notifier } from "../application/notifier.js";
import { txStore } from "../store/index.js";
import { HOSTS_GROUP, projectHost } from "./hosts.consumer.js";

// What scheduling consumes: its own meeting events, turned into email and SMS notices, and
// identity's user events, into the hosts projection. Each group starts from the earliest
// retained event, so nothing published before its first start is missed; consumeOnce makes
// redelivery harmless.

export const NOTIFIER_GROUP = "scheduling-notifier";

export interface ConsumerDeps extends KitConsumerDeps {
  notifier: Notifier;
}

/**
 * Which notices an event calls for: the meeting, the kind, and whether emails go out
 * ("schedule": as the booked schedule's setting says). SMS follows the attendee's phone.
 */
interface Plan {
  meeting: Meeting;
  kind: NoticeKind;
  emails: boolean | "schedule";
}

const options = { ignoreUnknownFields: true };

/** The plan of a meeting event, undefined for events that call for none; throws on an unreadable one. */
function planOf(event: EventEnvelope): Plan | undefined {
  const data = event.data as JsonValue;
  let plan: Plan | undefined;
  switch (event.type) {
    case EVENT_TYPES.meetingBooked: {
      const { meeting, sandbox } = fromJson(MeetingBookedSchema, data, options);
      if (sandbox) return undefined;
      plan = meeting && { meeting, kind: "confirmation", emails: "schedule" };
      break;
    }
    case EVENT_TYPES.meetingRescheduled: {
      const { meeting } = fromJson(MeetingRescheduledSchema, data, options);
      plan = meeting && { meeting, kind: "update", emails: true };
      break;
    }
    case EVENT_TYPES.meetingCanceled: {
      const { meeting, sendNotifications, sandbox } = fromJson(MeetingCanceledSchema, data, options);
      // Suppressed cancellations send nothing at all, SMS included; the sandbox's are state, not news.
      if (!sendNotifications || sandbox) return undefined;
      plan = meeting && { meeting, kind: "cancellation", emails: true };
      break;
    }
    default:
      return undefined;
  }
  const m = plan?.meeting;
  if (!m?.host || !m.attendee || !m.startTime || !m.endTime)
    throw new Error(`${event.type} without a complete meeting`);
  return plan;
}

function noticesOf({ meeting, kind }: Plan, emails: boolean): Notice[] {
  const { host, attendee, startTime, endTime } = meeting;
  if (!host || !attendee || !startTime || !endTime) return [];
  const base = {
    kind,
    orgId: meeting.orgId,
    meetingId: meeting.id,
    title: meeting.title,
    startTime: timestampDate(startTime),
    endTime: timestampDate(endTime),
  };
  const notices: Notice[] = [];
  if (emails) {
    notices.push({ ...base, channel: "email", recipient: "host", to: host.email });
    notices.push({ ...base, channel: "email", recipient: "attendee", to: attendee.email });
  }
  if (attendee.phone) notices.push({ ...base, channel: "sms", recipient: "attendee", to: attendee.phone });
  return notices;
}

async function sendsEmails(plan: Plan, q: Queryable): Promise<boolean> {
  if (plan.emails !== "schedule") return plan.emails;
  const { orgId, smartScheduling } = plan.meeting;
  // The setting as it stands when the notice goes out; it is not the booking request's to override.
  const schedule = await txStore(q).findSchedule(orgId, smartScheduling?.scheduleId ?? "");
  return schedule?.sendConfirmations ?? false;
}

function notify(deps: ConsumerDeps, message: ConsumedMessage): Promise<void> {
  return consumeEvent(deps, NOTIFIER_GROUP, message, planOf, async (q, planned, event) => {
    for (const notice of noticesOf(planned, await sendsEmails(planned, q))) {
      try {
        await deps.notifier.send(notice);
      } catch (err) {
        // Best effort, as identity's invitations: a retry could message twice once the provider recovers.
        deps.logger.warn(
          { err, meetingId: notice.meetingId, channel: notice.channel, eventId: event.id },
          "meeting notice failed",
        );
      }
    }
  });
}

/** Subscribes scheduling's consumers on `bus`; close the returned subscriptions before the bus. */
export function startSchedulingConsumers(deps: ConsumerDeps): Promise<Subscription[]> {
  return subscribeGroups(deps.bus, [
    { groupId: NOTIFIER_GROUP, topics: [TOPICS.scheduling], handler: (m) => notify(deps, m) },
    { groupId: HOSTS_GROUP, topics: [TOPICS.identity], handler: (m) => projectHost(deps, m) },
  ]);
}
