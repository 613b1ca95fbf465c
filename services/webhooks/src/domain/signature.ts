import { createHmac, randomBytes } from "node:crypto";

const PREFIX = "whsec_";
const SECRET_BYTES = 32;

/** A new signing secret in the Standard Webhooks form: whsec_ + base64 of random bytes. */
export function newSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error("not a whsec_ secret");
  return Buffer.from(secret.slice(PREFIX.length), "base64");
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` (Standard Webhooks). */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The secrets that sign at `now`: the current one, and the previous one while its grace period lasts. */
export interface SigningSecrets {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** The three Standard Webhooks headers; during a rotation's grace period two signatures, space-separated. */
export function signatureHeaders(
  secrets: SigningSecrets,
  id: string,
  now: Date,
  body: string,
): Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signatures = [sign(secrets.secret, id, timestamp, body)];
  if (secrets.previousSecret && secrets.previousSecretExpiresAt && secrets.previousSecretExpiresAt > now) {
    signatures.push(sign(secrets.previousSecret, id, timestamp, body));
  }
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signatures.join(" ") };
}
