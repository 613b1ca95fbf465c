import { createHmac, randomBytes } from "node:crypto";
import { problem } from "./problems.js";

// Crockford-like lowercase base32 without ambiguous letters keeps ids URL-safe and case-stable.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const ID_BODY_LENGTH = 24;
const ID_BODY = /^[0-9a-hjkmnp-tv-z]{24}$/;

function encode(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < ID_BODY_LENGTH; i++) out += ALPHABET[(bytes[i] ?? 0) % 32];
  return out;
}

/** A new opaque id such as `org_7k2…`. */
export function newId(prefix: string): string {
  return prefix + encode(randomBytes(ID_BODY_LENGTH));
}

const SEQUENCE_DIGITS = 12;

/**
 * Ids for what is made many times a second and needs to be unique, not unpredictable (request
 * ids, rate-limit entries): a random half drawn once per sequence and a counter, instead of a
 * call to the random source per id. Same shape as `newId`: prefix + 24 characters.
 */
export function idSequence(prefix: string): () => string {
  const base = prefix + encode(randomBytes(ID_BODY_LENGTH)).slice(0, ID_BODY_LENGTH - SEQUENCE_DIGITS);
  let next = 0;
  return () => {
    let n = next++;
    let tail = "";
    for (let i = 0; i < SEQUENCE_DIGITS; i++) {
      tail = ALPHABET[n % 32] + tail;
      n = Math.floor(n / 32);
    }
    return base + tail;
  };
}

/** A deterministic id derived from a seed and a label (sandbox data). */
export function seededId(prefix: string, seed: string, label: string): string {
  const digest = createHmac("sha256", seed).update(`id:${prefix}:${label}`).digest();
  return prefix + encode(digest);
}

export function isId(prefix: string | readonly string[], raw: string): boolean {
  const prefixes = typeof prefix === "string" ? [prefix] : prefix;
  return prefixes.some((p) => raw.startsWith(p) && ID_BODY.test(raw.slice(p.length)));
}

/** Checks a path id; a wrong prefix or shape is 400 invalid-resource-id. */
export function parseId(prefix: string | readonly string[], raw: string, what = "id"): string {
  if (!isId(prefix, raw)) {
    throw problem("invalid-resource-id", `${what} '${raw}' is not a valid resource id: ${idFault(prefix, raw)}`, {
      parameter: what,
    });
  }
  return raw;
}

/** What is wrong with an id that `isId` refused: its prefix, else its length, else its alphabet. */
export function idFault(prefix: string | readonly string[], raw: string): string {
  const prefixes = typeof prefix === "string" ? [prefix] : prefix;
  const matched = prefixes.find((p) => raw.startsWith(p));
  if (matched === undefined) return `expected prefix ${prefixes.join(", ")}`;
  const body = raw.slice(matched.length);
  if (body.length !== ID_BODY_LENGTH) {
    return `after ${matched} come ${ID_BODY_LENGTH} characters, not ${body.length}`;
  }
  const bad = [...new Set([...body].filter((c) => !ALPHABET.includes(c)))];
  return `after ${matched} come only 0-9 and lowercase a-z without i, l, o and u, not ${bad.map((c) => `'${c}'`).join(", ")}`;
}

/**
 * The record `find` answers for the path id `raw` (checked as `parseId` checks it, `what`
 * naming it in the 400), else the 404 that `notFound` makes of the id.
 */
export async function findById<T>(
  prefix: string | readonly string[],
  raw: string,
  what: string,
  find: (id: string) => Promise<T | undefined>,
  notFound: (id: string) => Error,
): Promise<T> {
  const id = parseId(prefix, raw, what);
  const found = await find(id);
  if (!found) throw notFound(id);
  return found;
}
