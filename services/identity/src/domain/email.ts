import { describeEmailFault, type EmailWording, MAX_EMAIL_ADDRESS, MAX_EMAIL_LOCAL } from "@platform/kit/email";
import { problem } from "@platform/kit/problems";

// The address rules are the kit's (shared with scheduling's attendees); the wording of each
// fault is identity's API text.
const WORDING: EmailWording = {
  "too-long": `is longer than ${MAX_EMAIL_ADDRESS} characters`,
  "no-at": "has no @",
  "empty-local": "has nothing before the @",
  "local-too-long": `has a local part longer than ${MAX_EMAIL_LOCAL} characters`,
  "single-label-domain": "has no domain with a top-level domain after the @",
  "invalid-domain": (domain) => `has an invalid domain '${domain}'`,
};

/** Why `address` is not a deliverable addr-spec, or undefined when it is. */
export function emailProblem(address: string): string | undefined {
  return describeEmailFault(address, WORDING);
}

/** The invitee's email: trimmed, a valid addr-spec (else 400 invalid-email), lower-case. */
export function normaliseEmail(raw: string): string {
  const address = raw.trim();
  const why = emailProblem(address);
  if (why) throw problem("invalid-email", `The email '${address}' ${why}.`);
  return address.toLowerCase();
}
