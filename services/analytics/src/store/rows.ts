import { dateOrNull, type Row, textOrNull } from "@platform/kit/db";
import type { Delivery } from "../domain/delivery.js";
import type { BlastRecord, SentEmailRecord } from "../domain/model.js";

export function toDelivery(r: Row): Delivery {
  return {
    sentEmailId: String(r.sent_email_id),
    recipientEmail: String(r.recipient_email),
    orgId: String(r.org_id),
    blastId: textOrNull(r.blast_id),
    sentAt: dateOrNull(r.sent_at),
    bounced: Boolean(r.bounced),
    sendFailed: Boolean(r.send_failed),
    opens: Number(r.opens),
    clicks: Number(r.clicks),
    replies: Number(r.replies),
    autoReplies: Number(r.auto_replies),
    lastOpenAt: dateOrNull(r.last_open_at),
    lastClickAt: dateOrNull(r.last_click_at),
    lastReplyAt: dateOrNull(r.last_reply_at),
    lastOpenLocation: textOrNull(r.last_open_location),
  };
}

export function toSentEmail(r: Row, recipientEmails: string[]): SentEmailRecord {
  return {
    id: String(r.id),
    subject: String(r.subject),
    senderUserId: String(r.sender_user_id),
    senderDisplayName: String(r.sender_display_name),
    blastId: textOrNull(r.blast_id),
    recipientEmails,
    sentAt: new Date(r.sent_at as string | Date),
    opens: Number(r.opens),
    clicks: Number(r.clicks),
    replies: Number(r.replies),
    lastOpenAt: dateOrNull(r.last_open_at),
    lastClickAt: dateOrNull(r.last_click_at),
    lastReplyAt: dateOrNull(r.last_reply_at),
    lastOpenLocation: textOrNull(r.last_open_location),
  };
}

export function toBlast(r: Row): BlastRecord {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    name: String(r.name),
    templateName: String(r.template_name ?? ""),
    subject: String(r.subject ?? ""),
    ownerUserId: String(r.owner_user_id ?? ""),
    ownerDisplayName: String(r.owner_display_name ?? ""),
    status: String(r.status),
    sentAt: dateOrNull(r.sent_at),
    recipientCount: Number(r.recipient_count),
    successfulSent: Number(r.successful_sent),
    uniqueOpens: Number(r.unique_opens),
    uniqueClicks: Number(r.unique_clicks),
    uniqueReplies: Number(r.unique_replies),
    totalOpens: Number(r.total_opens),
    totalClicks: Number(r.total_clicks),
    totalReplies: Number(r.total_replies),
  };
}
