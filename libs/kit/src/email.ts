// The one check of an email address (identity's invitations, scheduling's attendees): an
// RFC 5322 addr-spec restricted to what mail systems deliver in practice.
// - the local part is a dot-atom: atext runs separated by single dots. Quoted strings,
//   comments and obsolete forms are legal RFC 5322 but in practice only seen in attacks and
//   typos, and they break naive consumers downstream (CRM sync, calendar invites);
// - the domain is a DNS host name of at least two labels: no address literals ([1.2.3.4]),
//   no bare hosts, no all-numeric top-level domain. Internationalised domains must arrive
//   as punycode (xn--), with an ASCII local part;
// - lengths follow RFC 5321: 64 for the local part, 63 per label, 254 overall (the path
//   limit of 256 minus the angle brackets).
// Each API words the fault its own way (its messages are part of its contract), so this
// returns what is wrong, not a sentence.

export const MAX_EMAIL_ADDRESS = 254;
export const MAX_EMAIL_LOCAL = 64;
const MAX_LABEL = 63;

const ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const NUMERIC = /^[0-9]+$/;

/** What is wrong with an address, in the order the checks run. */
export type EmailFault =
  | "too-long"
  | "no-at"
  | "empty-local"
  | "local-too-long"
  | "invalid-local"
  | "single-label-domain"
  | "invalid-domain";

/** Why `address` is not a deliverable addr-spec (and its domain part), or undefined when it is. Not trimmed. */
export function emailFault(address: string): { fault: EmailFault; domain: string } | undefined {
  const at = address.lastIndexOf("@");
  const domain = at < 0 ? "" : address.slice(at + 1);
  const fault = check(address, at, domain);
  return fault && { fault, domain };
}

function check(address: string, at: number, domain: string): EmailFault | undefined {
  if (address.length > MAX_EMAIL_ADDRESS) return "too-long";
  if (at < 0) return "no-at";
  const local = address.slice(0, at);
  if (local === "") return "empty-local";
  if (local.length > MAX_EMAIL_LOCAL) return "local-too-long";
  if (!local.split(".").every((atom) => ATOM.test(atom))) return "invalid-local";
  const labels = domain.split(".");
  if (labels.length < 2) return "single-label-domain";
  if (!labels.every((l) => l.length <= MAX_LABEL && LABEL.test(l))) return "invalid-domain";
  // All-numeric top-level domains do not exist; this also rejects dotted IPv4 addresses.
  if (NUMERIC.test(labels.at(-1) ?? "")) return "invalid-domain";
  return undefined;
}

/** The local-part fault in words both APIs use. */
export const INVALID_LOCAL_PART =
  "has a local part with a character, a leading or trailing dot, or two dots in a row that are not allowed";

/** How one API words each fault; the function form receives the address's domain part. */
export type EmailWording = Record<Exclude<EmailFault, "invalid-local">, string | ((domain: string) => string)>;

/**
 * Why `address` is not a deliverable addr-spec, in an API's words (the local-part fault in the
 * words all APIs share), or undefined when it is. Not trimmed.
 */
export function describeEmailFault(address: string, wording: EmailWording): string | undefined {
  const found = emailFault(address);
  if (!found) return undefined;
  if (found.fault === "invalid-local") return INVALID_LOCAL_PART;
  const words = wording[found.fault];
  return typeof words === "string" ? words : words(found.domain);
}
