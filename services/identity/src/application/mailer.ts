import type { Logger } from "@platform/kit/logger";

/** An invitation to send: the invitee's address and what they are invited as. */
export interface InvitationEmail {
  orgId: string;
  userId: string;
  email: string;
  role: string;
}

/** Sends invitation emails through a mail provider; a rejected promise means it was not sent. */
export interface InvitationMailer {
  sendInvitation(invitation: InvitationEmail): Promise<void>;
}

/**
 * The built-in simulated provider: it sends nothing and logs one line per invitation. The
 * address itself is personal data, so only its domain is logged.
 */
export function logMailer(logger: Logger): InvitationMailer {
  return {
    async sendInvitation({ userId, email }) {
      logger.info({ userId, emailDomain: email.slice(email.lastIndexOf("@") + 1) }, "invitation email sent");
    },
  };
}
