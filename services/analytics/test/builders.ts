import type { EmailEvent } from "../src/domain/email-event.js";

let n = 0;

/** An email event with plain defaults (a human, non-blast email), each with a fresh event id. */
export function emailEvent(
  e: Pick<EmailEvent, "orgId" | "kind" | "messageId" | "recipientEmail" | "senderUserId"> & {
    at: string;
  } & Partial<EmailEvent>,
): EmailEvent {
  const { at, ...fields } = e;
  return {
    eventId: `test-event-${++n}`,
    occurredAt: new Date(at),
    subject: `Subject ${e.messageId}`,
    senderDisplayName: "Sender",
    blastId: null,
    autoReply: false,
    location: null,
    ...fields,
  };
}
