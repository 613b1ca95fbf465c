import { createHash } from "node:crypto";
import type { MeetingRecord, VideoProvider } from "../domain/model.js";

/** What a host's calendar event shows. */
export interface CalendarEventInput {
  /** The meeting the event belongs to (the platform's id, for the provider's metadata). */
  meetingId: string;
  hostUserId: string;
  hostEmail: string;
  title: string;
  start: Date;
  end: Date;
  /** The attendee and any additional attendees. */
  attendeeEmails: string[];
  /** Join URL or address, as the invitation shows it; null when the schedule names no place. */
  where: string | null;
}

/**
 * The host's calendar (the provider the host connected). A rejected promise means the
 * provider did not take the change; callers roll back their own write.
 */
export interface CalendarProvider {
  /** Creates the event and resolves to the provider's event id. */
  createEvent(event: CalendarEventInput): Promise<string>;
  /** Moves or edits the event (a reschedule may also hand it to another host). */
  updateEvent(eventId: string, event: CalendarEventInput): Promise<void>;
  /** Removes the event; removing one that is already gone succeeds. */
  deleteEvent(eventId: string): Promise<void>;
}

/** The video meeting a conferencing provider created. */
export interface ConferenceRoom {
  providerMeetingId: string;
  joinUrl: string;
}

export interface ConferencingProvider {
  createMeeting(input: {
    provider: VideoProvider;
    meetingId: string;
    title: string;
    start: Date;
    end: Date;
  }): Promise<ConferenceRoom>;
}

/** The meeting with a room of its location's video provider; other locations need none. */
export async function withConference(conferencing: ConferencingProvider, m: MeetingRecord): Promise<MeetingRecord> {
  const place = m.location;
  if (place?.type !== "video" || !place.provider) return m;
  const room = await conferencing.createMeeting({
    provider: place.provider,
    meetingId: m.id,
    title: m.title,
    start: m.start,
    end: m.end,
  });
  return {
    ...m,
    location: { ...place, joinUrl: room.joinUrl },
    conferencing: { provider: place.provider, providerMeetingId: room.providerMeetingId },
  };
}

const digest = (label: string, meetingId: string) =>
  createHash("sha256").update(`${label}:${meetingId}`).digest("hex").slice(0, 24);

/** The id the simulated calendar gives a meeting's event (the sandbox seeds its meetings with it). */
export const simulatedEventId = (meetingId: string): string => `simcal-${digest("event", meetingId)}`;

/** The room the simulated conferencing provider opens for a meeting. */
export function simulatedRoom(provider: VideoProvider, meetingId: string): ConferenceRoom {
  const providerMeetingId = digest(`room:${provider}`, meetingId);
  return { providerMeetingId, joinUrl: `https://${provider.replace("_", "-")}.meet.example/j/${providerMeetingId}` };
}

/**
 * The built-in simulated calendar: it talks to no provider and derives the event id from the
 * meeting id, so ids are deterministic (the same meeting always has the same event id, which
 * the sandbox and tests rely on). Real providers plug in through `CalendarProvider`.
 */
export function simulatedCalendar(): CalendarProvider {
  return {
    createEvent: async (event) => simulatedEventId(event.meetingId),
    updateEvent: async () => {},
    deleteEvent: async () => {},
  };
}

/** The built-in simulated conferencing provider: deterministic rooms derived from the meeting id, no network. */
export function simulatedConferencing(): ConferencingProvider {
  return { createMeeting: async ({ provider, meetingId }) => simulatedRoom(provider, meetingId) };
}
