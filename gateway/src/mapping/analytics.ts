import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import type {
  ActivityCount,
  EmailBlastDetail,
  EmailBlastRates,
  EmailBlastRecipient,
  EmailBlastRow,
  GetBuyerSignalsSummaryResponse,
  GetEmailBlastSummaryResponse,
  RecipientSignal,
  Sender,
  SentEmail,
  TopEmailBlast,
} from "@platform/contracts/analytics";
import { isoOrNull, required } from "@platform/contracts/rest/json";

// Analytics' messages as the spec's JSON: unset times and empty optional strings are explicit
// nulls, counts are numbers. A field the contract always sets that is missing is a service
// bug: a plain Error, which the error handler answers with an opaque 500.

const textOrNull = (s: string) => (s === "" ? null : s);

// Engagement counts (int64 in the contract) as JSON numbers: per email or recipient, and
// summed over a blast or a period.
const countsJson = (c: { opens: bigint; clicks: bigint; replies: bigint }) => ({
  opens: Number(c.opens),
  clicks: Number(c.clicks),
  replies: Number(c.replies),
});
/** A sent email's or a recipient's counts with when each kind of engagement last happened. */
const engagementJson = (e: {
  opens: bigint;
  clicks: bigint;
  replies: bigint;
  lastOpenTime?: Timestamp | undefined;
  lastClickTime?: Timestamp | undefined;
  lastReplyTime?: Timestamp | undefined;
}) => ({
  ...countsJson(e),
  lastOpenAt: isoOrNull(e.lastOpenTime),
  lastClickAt: isoOrNull(e.lastClickTime),
  lastReplyAt: isoOrNull(e.lastReplyTime),
});
const totalsJson = (t: { totalOpens: bigint; totalClicks: bigint; totalReplies: bigint }) => ({
  totalOpens: Number(t.totalOpens),
  totalClicks: Number(t.totalClicks),
  totalReplies: Number(t.totalReplies),
});

const senderJson = (s: Sender | undefined) => {
  const v = required(s, "sender");
  return { userId: v.userId, displayName: v.displayName };
};

export function buyerSignalsSummaryJson(s: GetBuyerSignalsSummaryResponse) {
  return {
    periodDays: s.periodDays,
    totalSent: Number(s.totalSent),
    hadOpened: Number(s.hadOpened),
    hadClicked: Number(s.hadClicked),
    hadReplied: Number(s.hadReplied),
    openedPercentage: s.openedPercentage,
    clickedPercentage: s.clickedPercentage,
    repliedPercentage: s.repliedPercentage,
  };
}

export function activityJson(periodDays: number, items: ActivityCount[]) {
  return { periodDays, items: items.map((i) => ({ date: i.date, action: i.action, count: Number(i.count) })) };
}

export function sentEmailJson(e: SentEmail) {
  return {
    id: e.id,
    subject: e.subject,
    sender: senderJson(e.sender),
    recipientEmails: e.recipientEmails,
    sentAt: timestampDate(required(e.sentTime, "sent_time")).toISOString(),
    ...engagementJson(e),
    lastOpenLocation: textOrNull(e.lastOpenLocation),
    emailType: e.emailType,
    blastId: textOrNull(e.blastId),
  };
}

export function recipientSignalJson(r: RecipientSignal) {
  return {
    recipientEmail: r.recipientEmail,
    contactId: textOrNull(r.contactId),
    ...engagementJson(r),
  };
}

export function emailBlastSummaryJson(s: GetEmailBlastSummaryResponse) {
  return {
    periodDays: s.periodDays,
    totalBlasts: Number(s.totalBlasts),
    totalRecipients: Number(s.totalRecipients),
    totalSuccessfulSent: Number(s.totalSuccessfulSent),
    ...totalsJson(s),
    openPercentage: s.openPercentage,
    clickPercentage: s.clickPercentage,
    replyPercentage: s.replyPercentage,
  };
}

export function topEmailBlastJson(b: TopEmailBlast) {
  return {
    blastId: b.blastId,
    blastName: b.blastName,
    recipientCount: Number(b.recipientCount),
    successfulSentCount: Number(b.successfulSentCount),
    uniqueOpens: Number(b.uniqueOpens),
    uniqueClicks: Number(b.uniqueClicks),
    uniqueReplies: Number(b.uniqueReplies),
    openRate: b.openRate,
    clickRate: b.clickRate,
    replyRate: b.replyRate,
    rankingScore: b.rankingScore,
  };
}

const ratesJson = (r: EmailBlastRates | undefined) => {
  const v = required(r, "rates");
  return { openRate: v.openRate, clickRate: v.clickRate, replyRate: v.replyRate, engagementScore: v.engagementScore };
};

export function emailBlastRowJson(b: EmailBlastRow) {
  return {
    blastId: b.blastId,
    blastName: b.blastName,
    templateName: b.templateName,
    sentAt: isoOrNull(b.sentTime),
    sender: senderJson(b.sender),
    recipientCount: Number(b.recipientCount),
    ...ratesJson(b.rates),
  };
}

export function emailBlastJson(b: EmailBlastDetail) {
  return {
    blastId: b.blastId,
    summary: {
      blastName: b.blastName,
      templateName: b.templateName,
      subject: b.subject,
      sender: senderJson(b.sender),
      sentAt: isoOrNull(b.sentTime),
      status: b.status,
      recipientCount: Number(b.recipientCount),
      successfulSentCount: Number(b.successfulSentCount),
    },
    performance: {
      ...totalsJson(b),
      ...ratesJson(b.rates),
    },
  };
}

export function emailBlastRecipientJson(r: EmailBlastRecipient) {
  return {
    recipientEmail: r.recipientEmail,
    sentAt: isoOrNull(r.sentTime),
    ...countsJson(r),
    lastOpenAt: isoOrNull(r.lastOpenTime),
    lastReplyAt: isoOrNull(r.lastReplyTime),
    lastOpenLocation: textOrNull(r.lastOpenLocation),
  };
}
