import { timestampDate } from "@bufbuild/protobuf/wkt";
import { EmailEventKind, type EmailEventRecorded } from "@platform/contracts/events/email";
import { isId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";

export type EmailEventKindName = "send" | "open" | "click" | "reply" | "bounce" | "send_failed";

/** An email event as analytics records it: checked, recipient in lower case, blank strings as null. */
export interface EmailEvent {
  eventId: string;
  orgId: string;
  kind: EmailEventKindName;
  occurredAt: Date;
  messageId: string;
  recipientEmail: string;
  subject: string;
  senderUserId: string;
  senderDisplayName: string;
  blastId: string | null;
  autoReply: boolean;
  location: string | null;
}

const KINDS: Partial<Record<EmailEventKind, EmailEventKindName>> = {
  [EmailEventKind.SEND]: "send",
  [EmailEventKind.OPEN]: "open",
  [EmailEventKind.CLICK]: "click",
  [EmailEventKind.REPLY]: "reply",
  [EmailEventKind.BOUNCE]: "bounce",
  [EmailEventKind.SEND_FAILED]: "send_failed",
};

const MAX_TEXT = 1000;

/**
 * Checks one event of a batch and normalises it; a malformed one is 400 invalid-field naming
 * `at` (e.g. `events[3].orgId`), so the producer can find it.
 */
export function emailEventOf(e: EmailEventRecorded, at = "event"): EmailEvent {
  const invalid = (field: string, why: string) =>
    problem("invalid-field", `${at}.${field} ${why}.`, { field: `${at}.${field}` });
  if (e.eventId.trim() === "" || e.eventId.length > 200) throw invalid("eventId", "must be 1 to 200 characters");
  if (!isId("org_", e.orgId)) throw invalid("orgId", "must be an org_ id");
  const kind = KINDS[e.kind];
  if (!kind) throw invalid("kind", "must be one of SEND, OPEN, CLICK, REPLY, BOUNCE, SEND_FAILED");
  if (!e.occurredAt) throw invalid("occurredAt", "is required");
  if (e.messageId.trim() === "" || e.messageId.length > 500) throw invalid("messageId", "must be 1 to 500 characters");
  const recipientEmail = e.recipientEmail.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(recipientEmail) || recipientEmail.length > 320) {
    throw invalid("recipientEmail", "must be an email address");
  }
  if (!isId("usr_", e.senderUserId)) throw invalid("senderUserId", "must be a usr_ id");
  if (e.blastId !== "" && !isId("blast_", e.blastId)) throw invalid("blastId", "must be a blast_ id or empty");
  if (e.subject.length > MAX_TEXT) throw invalid("subject", `must be at most ${MAX_TEXT} characters`);
  return {
    eventId: e.eventId,
    orgId: e.orgId,
    kind,
    occurredAt: timestampDate(e.occurredAt),
    messageId: e.messageId,
    recipientEmail,
    subject: e.subject,
    senderUserId: e.senderUserId,
    senderDisplayName: e.senderDisplayName.slice(0, 200),
    blastId: e.blastId === "" ? null : e.blastId,
    autoReply: kind === "reply" && e.autoReply,
    location: kind === "open" && e.location.trim() !== "" ? e.location.trim().slice(0, 200) : null,
  };
}
