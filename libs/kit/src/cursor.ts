import { createHmac, timingSafeEqual } from "node:crypto";
import { problem } from "./problems.js";

/**
 * Opaque page cursors: the keyset position of the last item as base64url JSON, plus an
 * HMAC-SHA256 over the position and the sort it was minted under. Integrators cannot
 * forge positions, and a cursor replayed under another sort is rejected instead of
 * silently returning a wrong page.
 */
export interface CursorCodec {
  /** `position` is a list of JSON values (sort key, id); Dates come back as ISO strings. */
  encode(sort: string, position: unknown[]): string;
  /** Malformed, tampered or minted under another sort: 400 invalid-cursor. */
  decode(cursor: string, sort: string): unknown[];
}

export function createCursorCodec(secret: string): CursorCodec {
  const mac = (sort: string, payload: string) =>
    createHmac("sha256", secret).update(`cursor\n${sort}\n${payload}`).digest();
  const invalid = () => problem("invalid-cursor", "The cursor is malformed, was altered, or belongs to another sort.");
  return {
    encode(sort, position) {
      const payload = Buffer.from(JSON.stringify(position)).toString("base64url");
      return `${payload}.${mac(sort, payload).toString("base64url")}`;
    },
    decode(cursor, sort) {
      const [payload, signature, ...rest] = cursor.split(".");
      if (!payload || !signature || rest.length > 0) throw invalid();
      const given = Buffer.from(signature, "base64url");
      const expected = mac(sort, payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      let position: unknown;
      try {
        position = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      } catch {
        throw invalid();
      }
      if (!Array.isArray(position)) throw invalid();
      return position;
    },
  };
}
