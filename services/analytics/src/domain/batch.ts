import {
  type Action,
  applyEvent,
  type BlastContribution,
  blastContribution,
  type Delivery,
  emptyDelivery,
  eventAction,
  isSuccessful,
  sendDay,
  sentEmailId,
  wentOutAt,
} from "./delivery.js";
import type { EmailEvent } from "./email-event.js";
import { dayOf } from "./period.js";

// A batch of new events turned into the changes of every rollup, in memory, so the store
// writes each table once per batch (a few statements whatever the batch size).

export const deliveryKey = (sentEmailId: string, recipientEmail: string) => `${sentEmailId}\n${recipientEmail}`;

/**
 * What a batch adds to one sent email: counters as deltas, times as candidates for max. Its
 * sentAt is not among them: it follows from all of its deliveries (see BatchPlan.sendTimes).
 */
export interface SentEmailChange {
  id: string;
  orgId: string;
  messageId: string;
  subject: string;
  senderUserId: string;
  senderDisplayName: string;
  blastId: string | null;
  opens: number;
  clicks: number;
  replies: number;
  lastOpenAt: Date | null;
  lastOpenLocation: string | null;
  lastClickAt: Date | null;
  lastReplyAt: Date | null;
}

/** Candidates for a recipient's latest times (successful send, open, click, reply). */
export interface RecipientChange {
  orgId: string;
  recipientEmail: string;
  lastSentAt: Date | null;
  lastOpenAt: Date | null;
  lastClickAt: Date | null;
  lastReplyAt: Date | null;
}

/** A blast is its org's: another org's events naming the same blast id count toward that org's own. */
export interface BlastChange extends BlastContribution {
  orgId: string;
  blastId: string;
  totalOpens: number;
  totalClicks: number;
  totalReplies: number;
}

export interface ActivityChange {
  orgId: string;
  day: string;
  action: Action;
  delta: number;
}

export interface BlastActivityChange extends ActivityChange {
  blastId: string;
}

export interface BatchPlan {
  sentEmails: SentEmailChange[];
  /** Deliveries as they stand after the batch (only the touched ones). */
  deliveries: Delivery[];
  recipients: RecipientChange[];
  /** Recipients a bounce or failure may have taken their latest successful send from: recomputed. */
  retracted: { orgId: string; recipientEmail: string }[];
  /**
   * Sent emails a delivery of which went out, moved its send or turned out to have failed
   * before sending: their sentAt is recomputed from all their deliveries, so a late SEND_FAILED
   * takes back a time as surely as an early SEND brings one.
   */
  sendTimes: string[];
  blasts: BlastChange[];
  orgActivity: ActivityChange[];
  blastActivity: BlastActivityChange[];
}

const maxDate = (a: Date | null, b: Date | null): Date | null => (a === null ? b : b === null || a >= b ? a : b);

/** The delivery keys a batch touches, for the store to load (and lock) before planning. */
export function deliveryKeys(events: readonly EmailEvent[]): { sentEmailId: string; recipientEmail: string }[] {
  const keys = new Map<string, { sentEmailId: string; recipientEmail: string }>();
  for (const e of events) {
    const id = sentEmailId(e.orgId, e.messageId);
    keys.set(deliveryKey(id, e.recipientEmail), { sentEmailId: id, recipientEmail: e.recipientEmail });
  }
  return [...keys.values()];
}

function activityAdder<T extends ActivityChange>(into: Map<string, T>, keyOf: (change: T) => string) {
  return (change: T) => {
    const key = keyOf(change);
    const found = into.get(key);
    if (found) found.delta += change.delta;
    else into.set(key, change);
  };
}

/**
 * Plans a batch of events not recorded before, against the deliveries as they stood
 * (`before`, keyed by deliveryKey; missing ones are new). Counters change by the difference
 * of each delivery's contribution before and after, so replaying history in any split into
 * batches ends in the same rollups.
 */
export function planBatch(events: readonly EmailEvent[], before: ReadonlyMap<string, Delivery>): BatchPlan {
  const ordered = [...events].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
  const after = new Map<string, Delivery>();
  const sentEmails = new Map<string, SentEmailChange>();
  const recipients = new Map<string, RecipientChange>();
  const blastTotals = new Map<string, BlastChange>();
  const orgActivity = new Map<string, ActivityChange>();
  const blastActivity = new Map<string, BlastActivityChange>();
  const sendTimes = new Set<string>();
  const addOrgChange = activityAdder(orgActivity, (a) => `${a.orgId}\n${a.day}\n${a.action}`);
  const addBlastChange = activityAdder(blastActivity, (a) => `${a.orgId}\n${a.blastId}\n${a.day}\n${a.action}`);
  const addOrg = (orgId: string, day: string, action: Action, delta: number) =>
    addOrgChange({ orgId, day, action, delta });
  const addBlast = (d: Delivery, day: string, action: Action, delta: number) => {
    if (d.blastId !== null) addBlastChange({ orgId: d.orgId, blastId: d.blastId, day, action, delta });
  };

  const blastOf = (orgId: string, blastId: string): BlastChange => {
    const key = `${orgId}\n${blastId}`;
    let b = blastTotals.get(key);
    if (!b) {
      b = {
        orgId,
        blastId,
        successfulSent: 0,
        uniqueOpens: 0,
        uniqueClicks: 0,
        uniqueReplies: 0,
        totalOpens: 0,
        totalClicks: 0,
        totalReplies: 0,
      };
      blastTotals.set(key, b);
    }
    return b;
  };
  const recipientOf = (orgId: string, recipientEmail: string): RecipientChange => {
    const key = `${orgId}\n${recipientEmail}`;
    let r = recipients.get(key);
    if (!r) {
      r = { orgId, recipientEmail, lastSentAt: null, lastOpenAt: null, lastClickAt: null, lastReplyAt: null };
      recipients.set(key, r);
    }
    return r;
  };

  for (const e of ordered) {
    const id = sentEmailId(e.orgId, e.messageId);
    const key = deliveryKey(id, e.recipientEmail);
    const d = applyEvent(after.get(key) ?? before.get(key) ?? emptyDelivery(e), e);
    after.set(key, d);

    let s = sentEmails.get(id);
    if (!s) {
      s = {
        id,
        orgId: e.orgId,
        messageId: e.messageId,
        subject: e.subject,
        senderUserId: e.senderUserId,
        senderDisplayName: e.senderDisplayName,
        blastId: e.blastId,
        opens: 0,
        clicks: 0,
        replies: 0,
        lastOpenAt: null,
        lastOpenLocation: null,
        lastClickAt: null,
        lastReplyAt: null,
      };
      sentEmails.set(id, s);
    }

    const action = eventAction(e);
    if (action === null) continue;
    const r = recipientOf(e.orgId, e.recipientEmail);
    const blast = d.blastId === null ? undefined : blastOf(d.orgId, d.blastId);
    addOrg(e.orgId, dayOf(e.occurredAt), action, 1);
    addBlast(d, dayOf(e.occurredAt), action, 1);
    if (action === "opens") {
      s.opens++;
      if (s.lastOpenAt === null || e.occurredAt >= s.lastOpenAt) s.lastOpenLocation = e.location;
      s.lastOpenAt = maxDate(s.lastOpenAt, e.occurredAt);
      r.lastOpenAt = maxDate(r.lastOpenAt, e.occurredAt);
      if (blast) blast.totalOpens++;
    } else if (action === "clicks") {
      s.clicks++;
      s.lastClickAt = maxDate(s.lastClickAt, e.occurredAt);
      r.lastClickAt = maxDate(r.lastClickAt, e.occurredAt);
      if (blast) blast.totalClicks++;
    } else if (action === "replies") {
      s.replies++;
      s.lastReplyAt = maxDate(s.lastReplyAt, e.occurredAt);
      r.lastReplyAt = maxDate(r.lastReplyAt, e.occurredAt);
      if (blast) blast.totalReplies++;
    }
  }

  const retracted: BatchPlan["retracted"] = [];
  for (const [key, d] of after) {
    const old = before.get(key);
    const wasSent = old ? sendDay(old) : null;
    const isSent = sendDay(d);
    if (wasSent !== isSent) {
      if (wasSent !== null) {
        addOrg(d.orgId, wasSent, "sends", -1);
        addBlast(d, wasSent, "sends", -1);
      }
      if (isSent !== null) {
        addOrg(d.orgId, isSent, "sends", 1);
        addBlast(d, isSent, "sends", 1);
      }
    }
    if ((old ? wentOutAt(old) : null)?.getTime() !== wentOutAt(d)?.getTime()) sendTimes.add(d.sentEmailId);
    if (isSuccessful(d)) {
      const r = recipientOf(d.orgId, d.recipientEmail);
      r.lastSentAt = maxDate(r.lastSentAt, d.sentAt);
    } else if (old && isSuccessful(old)) {
      retracted.push({ orgId: d.orgId, recipientEmail: d.recipientEmail });
    }
    if (d.blastId !== null) {
      const was = old ? blastContribution(old) : undefined;
      const now = blastContribution(d);
      const b = blastOf(d.orgId, d.blastId);
      b.successfulSent += now.successfulSent - (was?.successfulSent ?? 0);
      b.uniqueOpens += now.uniqueOpens - (was?.uniqueOpens ?? 0);
      b.uniqueClicks += now.uniqueClicks - (was?.uniqueClicks ?? 0);
      b.uniqueReplies += now.uniqueReplies - (was?.uniqueReplies ?? 0);
    }
  }

  const byKey = <T>(m: Map<string, T>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
  return {
    sentEmails: byKey(sentEmails),
    deliveries: byKey(after),
    recipients: byKey(recipients),
    retracted,
    sendTimes: [...sendTimes].sort(),
    blasts: byKey(blastTotals),
    orgActivity: byKey(orgActivity).filter((a) => a.delta !== 0),
    blastActivity: byKey(blastActivity).filter((a) => a.delta !== 0),
  };
}
