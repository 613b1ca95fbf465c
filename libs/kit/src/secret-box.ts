import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Secrets a service must read back (webhook signing secrets) are stored sealed with
 * AES-256-GCM under a key from configuration, named by a key id so that keys can rotate:
 * `enc:v1:<key id>:<iv>.<tag>.<ciphertext>` (base64url). The current key seals; retired
 * keys still open what they sealed until it is sealed again under the current one.
 */
export interface SecretBox {
  /** The id of the key that seals. */
  readonly keyId: string;
  seal(plain: string): string;
  /** The clear text of a sealed value; a value stored before sealing existed is returned as it is. */
  open(stored: string): string;
  /** True when `stored` is sealed under the current key (nothing to do on rotation). */
  isCurrent(stored: string): boolean;
}

const PREFIX = "enc:v1:";
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const IV_BYTES = 12;

/**
 * Parses a key as configured: `<key id>:<base64 of 32 random bytes>`
 * (`echo "k2026:$(openssl rand -base64 32)"`).
 */
export function parseSecretKey(raw: string): { id: string; key: Buffer } {
  const colon = raw.indexOf(":");
  const id = raw.slice(0, colon);
  if (colon <= 0 || !KEY_ID.test(id)) throw new Error("expected <key id>:<base64 key>, the id in [A-Za-z0-9_-]");
  const key = Buffer.from(raw.slice(colon + 1), "base64");
  if (key.length !== 32) throw new Error("the key must be 32 bytes (base64 of `openssl rand -base64 32`)");
  return { id, key };
}

/** A box sealing with `current` and opening what `current` or any of `retired` sealed. */
export function secretBox(current: string, retired: readonly string[] = []): SecretBox {
  const sealing = parseSecretKey(current);
  const keys = new Map<string, Buffer>();
  for (const raw of retired) {
    const k = parseSecretKey(raw);
    keys.set(k.id, k.key);
  }
  keys.set(sealing.id, sealing.key);
  return {
    keyId: sealing.id,
    seal(plain) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", sealing.key, iv);
      // The key id is authenticated too: a value cannot be relabelled to another key.
      cipher.setAAD(Buffer.from(sealing.id));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"));
      return `${PREFIX}${sealing.id}:${parts.join(".")}`;
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const rest = stored.slice(PREFIX.length);
      const colon = rest.indexOf(":");
      const id = rest.slice(0, colon);
      const key = keys.get(id);
      if (!key) throw new Error(`secret sealed with unknown key id '${id}': configure it among the retired keys`);
      const [iv, tag, body] = rest
        .slice(colon + 1)
        .split(".")
        .map((p) => Buffer.from(p, "base64url"));
      if (!iv || !tag || !body) throw new Error("malformed sealed secret");
      const decipher = createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAAD(Buffer.from(id));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
    },
    isCurrent(stored) {
      return stored.startsWith(`${PREFIX}${sealing.id}:`);
    },
  };
}
