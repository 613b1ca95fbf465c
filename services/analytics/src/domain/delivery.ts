import { EMAIL_ACTIONS } from "@platform/contracts/analytics";
import { seededId } from "@platform/kit/ids";
import type { EmailEvent } from "./email-event.js";
import { dayOf } from "./period.js";

// The heart of ingestion, as plain functions: how one event changes the state of one
// recipient of one email (a delivery), and which rollup changes follow from that.

export type Action = (typeof EMAIL_ACTIONS)[number];
export const ACTIONS: readonly Action[] = EMAIL_ACTIONS;

/** The semail_ id of a producer's message: derived, so both ingestion paths agree without a lookup. */
export function sentEmailId(orgId: string, messageId: string): string {
  return seededId("semail_", orgId, `message:${messageId}`);
}

export interface Delivery {
  sentEmailId: string;
  recipientEmail: string;
  orgId: string;
  blastId: string | null;
  /** The first SEND; null while none was seen. */
  sentAt: Date | null;
  bounced: boolean;
  sendFailed: boolean;
  opens: number;
  clicks: number;
  /** Human replies only; auto-responder replies are counted apart and never as replies. */
  replies: number;
  autoReplies: number;
  lastOpenAt: Date | null;
  lastClickAt: Date | null;
  lastReplyAt: Date | null;
  lastOpenLocation: string | null;
}

export function emptyDelivery(e: EmailEvent): Delivery {
  return {
    sentEmailId: sentEmailId(e.orgId, e.messageId),
    recipientEmail: e.recipientEmail,
    orgId: e.orgId,
    blastId: e.blastId,
    sentAt: null,
    bounced: false,
    sendFailed: false,
    opens: 0,
    clicks: 0,
    replies: 0,
    autoReplies: 0,
    lastOpenAt: null,
    lastClickAt: null,
    lastReplyAt: null,
    lastOpenLocation: null,
  };
}

const later = (a: Date | null, b: Date): Date => (a === null || b > a ? b : a);

/** The delivery after `e` (events may arrive in any order; the result does not depend on it, locations aside). */
export function applyEvent(d: Delivery, e: EmailEvent): Delivery {
  const t = e.occurredAt;
  switch (e.kind) {
    case "send":
      return { ...d, sentAt: d.sentAt === null || t < d.sentAt ? t : d.sentAt };
    case "send_failed":
      return { ...d, sendFailed: true };
    case "bounce":
      return { ...d, bounced: true };
    case "open": {
      const newest = d.lastOpenAt === null || t >= d.lastOpenAt;
      return {
        ...d,
        opens: d.opens + 1,
        lastOpenAt: later(d.lastOpenAt, t),
        lastOpenLocation: newest ? e.location : d.lastOpenLocation,
      };
    }
    case "click":
      return { ...d, clicks: d.clicks + 1, lastClickAt: later(d.lastClickAt, t) };
    case "reply":
      if (e.autoReply) return { ...d, autoReplies: d.autoReplies + 1 };
      return { ...d, replies: d.replies + 1, lastReplyAt: later(d.lastReplyAt, t) };
  }
}

/** Successfully sent: a SEND was seen and neither a bounce nor a pre-send failure. */
export function isSuccessful(d: Delivery): boolean {
  return d.sentAt !== null && !d.bounced && !d.sendFailed;
}

/**
 * When the delivery went out: its first SEND, unless it failed before sending. A bounce comes
 * after the send, so a bounced delivery did go out (it is not *successfully* sent, though).
 * Its email's sentAt is the earliest of these, and an email with none is not a sent email.
 */
export function wentOutAt(d: Delivery): Date | null {
  return d.sendFailed ? null : d.sentAt;
}

/** What a delivery adds to its blast's unique-recipient counters. */
export interface BlastContribution {
  successfulSent: number;
  uniqueOpens: number;
  uniqueClicks: number;
  uniqueReplies: number;
}

/** Only successfully sent recipients count, so no rate can pass 100 %. */
export function blastContribution(d: Delivery): BlastContribution {
  const ok = isSuccessful(d) ? 1 : 0;
  return {
    successfulSent: ok,
    uniqueOpens: ok && d.opens > 0 ? 1 : 0,
    uniqueClicks: ok && d.clicks > 0 ? 1 : 0,
    uniqueReplies: ok && d.replies > 0 ? 1 : 0,
  };
}

/** The day a delivery counts as a send in the activity (its send's day), or null when it is not one. */
export function sendDay(d: Delivery): string | null {
  return isSuccessful(d) && d.sentAt ? dayOf(d.sentAt) : null;
}

/** The activity an event itself adds: one open, click or human reply on its day; sends follow from the delivery. */
export function eventAction(e: EmailEvent): Action | null {
  if (e.kind === "open") return "opens";
  if (e.kind === "click") return "clicks";
  if (e.kind === "reply" && !e.autoReply) return "replies";
  return null;
}
