import { problem } from "@platform/kit/problems";

// An RFC 5322 addr-spec restricted to what mail systems deliver in practice: a dot-atom local
// part (quoted strings and comments are legal but are in practice only seen in attacks and
// typos) and a DNS host name with at least two labels (no address literals, no bare hosts).
// Internationalised addresses must arrive as punycode (xn--) domains with an ASCII local part.

const MAX_ADDRESS = 254; // RFC 5321 path limit (256) minus the angle brackets
const MAX_LOCAL = 64;
const MAX_LABEL = 63;

const ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+$/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const NUMERIC = /^[0-9]+$/;

/** Why `address` is not a deliverable addr-spec, or undefined when it is. */
export function emailProblem(address: string): string | undefined {
  if (address.length > MAX_ADDRESS) return `is longer than ${MAX_ADDRESS} characters`;
  const at = address.lastIndexOf("@");
  if (at < 0) return "has no @";
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local === "") return "has nothing before the @";
  if (local.length > MAX_LOCAL) return `has a local part longer than ${MAX_LOCAL} characters`;
  if (!local.split(".").every((atom) => ATOM.test(atom))) {
    return "has a local part with a character, a leading or trailing dot, or two dots in a row that are not allowed";
  }
  const labels = domain.split(".");
  if (labels.length < 2) return "has no domain with a top-level domain after the @";
  if (!labels.every((l) => l.length <= MAX_LABEL && LABEL.test(l))) return `has an invalid domain '${domain}'`;
  // All-numeric top-level domains do not exist; this also rejects dotted IPv4 addresses.
  if (NUMERIC.test(labels.at(-1) ?? "")) return `has an invalid domain '${domain}'`;
  return undefined;
}

/** The invitee's email: trimmed, a valid addr-spec (else 400 invalid-email), lower-case. */
export function normaliseEmail(raw: string): string {
  const address = raw.trim();
  const why = emailProblem(address);
  if (why) throw problem("invalid-email", `The email '${address}' ${why}.`);
  return address.toLowerCase();
}
