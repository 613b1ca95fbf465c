import type { Logger } from "@platform/kit/logger";

/** What a notice announces. */
export type NoticeKind = "confirmation" | "cancellation" | "update";

/** One message to one person over one channel. */
export interface Notice {
  kind: NoticeKind;
  channel: "email" | "sms";
  recipient: "host" | "attendee";
  orgId: string;
  meetingId: string;
  /** The address (email) or E.164 number (sms). */
  to: string;
  title: string;
  startTime: Date;
  endTime: Date;
}

/** Sends meeting notices through email and SMS providers; a rejected promise means it was not sent. */
export interface Notifier {
  send(notice: Notice): Promise<void>;
}

/**
 * The built-in simulated provider: it sends nothing and logs one line per message, naming
 * the meeting, kind, channel and recipient role only (addresses and numbers are personal data).
 */
export function logNotifier(logger: Logger): Notifier {
  return {
    async send({ kind, channel, recipient, meetingId }) {
      logger.info({ meetingId, kind, channel, recipient }, "meeting notice sent");
    },
  };
}
