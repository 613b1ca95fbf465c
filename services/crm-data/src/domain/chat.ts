/** The part of a chat message its visibility depends on. */
export interface ChatParties {
  recipients: "everyone" | "private";
  senderHostId: string | null;
  recipientHostId: string | null;
}

/**
 * Whether a message is shown: messages to everyone always; private ones only when the bot's
 * owning user sent or received them (the bot saw them on that user's behalf).
 */
export function chatVisible(message: ChatParties, botOwnerUserId: string): boolean {
  if (message.recipients === "everyone") return true;
  if (botOwnerUserId === "") return false;
  return message.senderHostId === botOwnerUserId || message.recipientHostId === botOwnerUserId;
}

/**
 * The same rule as `chatVisible` as a SQL condition over `crm.chat_messages m`, for listing
 * pages in the database; `$owner` is the bot owner's placeholder. A service test checks
 * that both agree.
 */
export const chatVisibleSql = (owner: string): string =>
  `(m.recipients = 'everyone' OR (${owner} <> '' AND ${owner} IN (m.sender_host_id, m.recipient_host_id)))`;
