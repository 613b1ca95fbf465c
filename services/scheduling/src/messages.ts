import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  type HostGroup,
  HostGroupSchema,
  type Meeting,
  MeetingSchema,
  type SmartSchedule,
  SmartScheduleSchema,
} from "@platform/contracts/scheduling";
import type { HostAvailability } from "./application/matching.js";
import type { HostRecord, LocationRecord, ScheduleRecord } from "./domain/model.js";
import { joinSlotTokens, SLOT_TOKEN_LENGTH, SLOT_TOKEN_TAIL_BYTES } from "./domain/slot-token.js";
import { meetingStatus } from "./domain/status.js";
import type { MeetingView } from "./store/index.js";

// Records to proto messages; unset optional fields stay unset (the gateway renders null).

const opt = (v: string | null) => v ?? undefined;

/** The lightweight host reference of assignees and availability. */
const hostRef = (h: HostRecord) => ({ userId: h.userId, displayName: h.displayName });

/**
 * A schedule as the list shows it (`assignees` undefined: the summary fields only) or as
 * the detail does (with its booking rules and assignees).
 */
export function scheduleMessage(s: ScheduleRecord, assignees?: HostRecord[]): SmartSchedule {
  const summary = {
    id: s.id,
    name: s.name,
    description: s.description,
    status: s.status,
    durationMinutes: s.durationMinutes,
    bookingPeriods: s.bookingPeriods,
    timeZone: s.timeZone,
    publishTime: s.publishedAt ? timestampFromDate(s.publishedAt) : undefined,
    updateTime: timestampFromDate(s.updatedAt),
  };
  if (!assignees) return create(SmartScheduleSchema, summary);
  return create(SmartScheduleSchema, {
    ...summary,
    bookingWindow: s.bookingWindow,
    matchingFormFields: s.matchingForm,
    surveyQuestions: s.surveyQuestions,
    assignees: assignees.map(hostRef),
  });
}

const MINUTE_MS = 60_000;

/**
 * How a caller asked for slots: one AvailableSlot message each, compact (starts in epoch minutes
 * and the tokens concatenated: a few bytes a slot besides its token, and no message per slot to
 * build, encode and decode), or compact with each host's tokens in parts (the head they share
 * once, then each slot's raw tail: 18 bytes a slot instead of 72 characters).
 */
export type SlotForm = "slots" | "compact" | "parts";

export const slotForm = (req: { compactSlots: boolean; tokenParts: boolean }): SlotForm =>
  !req.compactSlots ? "slots" : req.tokenParts ? "parts" : "compact";

/** One priority group of availability: its hosts with their signed slots, in `form`. */
export function hostGroupMessage(group: HostAvailability[], form: SlotForm): HostGroup {
  return create(HostGroupSchema, {
    hosts: group.map(({ host, starts, durationMinutes, tokenHead, tokenTails }) => {
      if (form === "slots") {
        const tokens = joinSlotTokens(tokenHead, tokenTails);
        return {
          host: hostRef(host),
          slots: starts.map((ms, i) => ({
            startTime: timestampFromDate(new Date(ms)),
            endTime: timestampFromDate(new Date(ms + durationMinutes * MINUTE_MS)),
            slotToken: tokens.slice(i * SLOT_TOKEN_LENGTH, (i + 1) * SLOT_TOKEN_LENGTH),
          })),
        };
      }
      const slots = { host: hostRef(host), startMinutes: starts.map((ms) => ms / MINUTE_MS), durationMinutes };
      return form === "parts"
        ? { ...slots, slotTokenHead: tokenHead, slotTokenTails: tokenTails, slotTokenTailBytes: SLOT_TOKEN_TAIL_BYTES }
        : { ...slots, slotTokens: joinSlotTokens(tokenHead, tokenTails), slotTokenLength: SLOT_TOKEN_LENGTH };
    }),
  });
}

function locationMessage(l: LocationRecord) {
  return { type: l.type, provider: opt(l.provider), joinUrl: opt(l.joinUrl), address: opt(l.address) };
}

/** The canonical meeting; its status is derived from `now`, and its links from `bookingBaseUrl`. */
export function meetingMessage({ meeting: m, host }: MeetingView, now: Date, bookingBaseUrl: string): Meeting {
  const c = m.campaign;
  return create(MeetingSchema, {
    id: m.id,
    orgId: m.orgId,
    host: {
      userId: host.userId,
      email: host.email,
      firstName: host.firstName,
      lastName: host.lastName,
      displayName: host.displayName,
    },
    attendee: {
      email: m.attendee.email,
      firstName: m.attendee.firstName,
      lastName: m.attendee.lastName,
      phone: opt(m.attendee.phone),
      timeZone: opt(m.attendee.timeZone),
    },
    additionalAttendees: m.additionalAttendees,
    title: m.title,
    startTime: timestampFromDate(m.start),
    endTime: timestampFromDate(m.end),
    timeZone: m.timeZone,
    location: m.location ? locationMessage(m.location) : undefined,
    conferencing: m.conferencing ?? undefined,
    calendarEventId: opt(m.calendarEventId),
    status: meetingStatus(m, now),
    createTime: timestampFromDate(m.createdAt),
    updateTime: timestampFromDate(m.updatedAt),
    smartScheduling: {
      scheduleId: m.scheduleId,
      formValues: m.formValues.map((v) => ({ key: v.key, answer: fromJson(ValueSchema, v.answer as JsonValue) })),
      surveyResponses: m.surveyResponses,
      rescheduleUrl: `${bookingBaseUrl}/meetings/${m.id}/reschedule`,
      cancelUrl: `${bookingBaseUrl}/meetings/${m.id}/cancel`,
      campaign: c
        ? {
            id: opt(c.id),
            source: opt(c.source),
            medium: opt(c.medium),
            campaign: opt(c.campaign),
            term: opt(c.term),
            content: opt(c.content),
          }
        : undefined,
      preview: m.preview,
    },
  });
}
