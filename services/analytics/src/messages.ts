import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  EmailBlastDetailSchema,
  EmailBlastRecipientSchema,
  EmailBlastRowSchema,
  RecipientSignalSchema,
  SentEmailSchema,
  TopEmailBlastSchema,
} from "@platform/contracts/analytics";
import type { Delivery } from "./domain/delivery.js";
import type { BlastRecord, SentEmailRecord } from "./domain/model.js";
import { type Rates, ratesOf } from "./domain/rates.js";

const ts = (d: Date | null) => (d === null ? undefined : timestampFromDate(d));

export function sentEmailMessage(e: SentEmailRecord): MessageInitShape<typeof SentEmailSchema> {
  return {
    id: e.id,
    subject: e.subject,
    sender: { userId: e.senderUserId, displayName: e.senderDisplayName },
    recipientEmails: e.recipientEmails,
    sentTime: timestampFromDate(e.sentAt),
    opens: BigInt(e.opens),
    clicks: BigInt(e.clicks),
    replies: BigInt(e.replies),
    lastOpenTime: ts(e.lastOpenAt),
    lastClickTime: ts(e.lastClickAt),
    lastReplyTime: ts(e.lastReplyAt),
    lastOpenLocation: e.lastOpenLocation ?? "",
    emailType: e.blastId === null ? "standard" : "email-blast",
    blastId: e.blastId ?? "",
  };
}

export function recipientSignalMessage(
  d: Delivery,
  contactId: string | undefined,
): MessageInitShape<typeof RecipientSignalSchema> {
  return {
    recipientEmail: d.recipientEmail,
    contactId: contactId ?? "",
    opens: BigInt(d.opens),
    clicks: BigInt(d.clicks),
    replies: BigInt(d.replies),
    lastOpenTime: ts(d.lastOpenAt),
    lastClickTime: ts(d.lastClickAt),
    lastReplyTime: ts(d.lastReplyAt),
  };
}

export function blastRecipientMessage(d: Delivery): MessageInitShape<typeof EmailBlastRecipientSchema> {
  return {
    recipientEmail: d.recipientEmail,
    sentTime: ts(d.sentAt),
    opens: BigInt(d.opens),
    clicks: BigInt(d.clicks),
    replies: BigInt(d.replies),
    lastOpenTime: ts(d.lastOpenAt),
    lastReplyTime: ts(d.lastReplyAt),
    lastOpenLocation: d.lastOpenLocation ?? "",
  };
}

const sender = (b: BlastRecord) => ({ userId: b.ownerUserId, displayName: b.ownerDisplayName });

export function blastRowMessage(b: BlastRecord): MessageInitShape<typeof EmailBlastRowSchema> {
  return {
    blastId: b.id,
    blastName: b.name,
    templateName: b.templateName,
    sentTime: ts(b.sentAt),
    sender: sender(b),
    recipientCount: BigInt(b.recipientCount),
    rates: ratesOf(b),
  };
}

export function topBlastMessage(b: BlastRecord, rankingScore: number): MessageInitShape<typeof TopEmailBlastSchema> {
  const rates: Rates = ratesOf(b);
  return {
    blastId: b.id,
    blastName: b.name,
    recipientCount: BigInt(b.recipientCount),
    successfulSentCount: BigInt(b.successfulSent),
    uniqueOpens: BigInt(b.uniqueOpens),
    uniqueClicks: BigInt(b.uniqueClicks),
    uniqueReplies: BigInt(b.uniqueReplies),
    openRate: rates.openRate,
    clickRate: rates.clickRate,
    replyRate: rates.replyRate,
    rankingScore,
  };
}

export function blastDetailMessage(b: BlastRecord): MessageInitShape<typeof EmailBlastDetailSchema> {
  return {
    blastId: b.id,
    blastName: b.name,
    templateName: b.templateName,
    subject: b.subject,
    sender: sender(b),
    sentTime: ts(b.sentAt),
    status: b.status,
    recipientCount: BigInt(b.recipientCount),
    successfulSentCount: BigInt(b.successfulSent),
    totalOpens: BigInt(b.totalOpens),
    totalClicks: BigInt(b.totalClicks),
    totalReplies: BigInt(b.totalReplies),
    rates: ratesOf(b),
  };
}
