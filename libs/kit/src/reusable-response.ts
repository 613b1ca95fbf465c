import { type DescMessage, type MessageShape, toBinary } from "@bufbuild/protobuf";

/**
 * Response messages a handler answers with again and again unchanged (built once per cache
 * fill), and their encoding once made. Why: encoding a message with protobuf-es walks it by
 * reflection on every call; for identity's GetOrganization, which answers the same cached
 * organization on every `GET /organizations/me`, that walk was about a third of everything the
 * process allocated (docs/benchmarks/gateway.md, "Encoded once, and the rate-limit hit's timer").
 */
const encodings = new WeakMap<object, Uint8Array | null>();

/**
 * Marks `message` as one the handler will return again without changing it: kit's server
 * encodes it on its first answer and reuses the bytes. The caller must never change the message
 * afterwards (build a new one instead, as a cache does when it fills again).
 */
export function reusableResponse<T extends object>(message: T): T {
  if (!encodings.has(message)) encodings.set(message, null);
  return message;
}

/**
 * One reusable response per key, built on first use: for a handler that answers from a cache,
 * keyed by the cached value (held weakly), so a new fill of the cache builds and encodes anew.
 */
export function reusableResponses<K extends object, R extends object>(build: (key: K) => R): (key: K) => R {
  const responses = new WeakMap<K, R>();
  return (key) => {
    let response = responses.get(key);
    if (response === undefined) {
      response = reusableResponse(build(key));
      responses.set(key, response);
    }
    return response;
  };
}

/** The binary encoding of a response: made once for a reusable message, every time else. */
export function encodeResponse<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Uint8Array {
  const known = encodings.get(message);
  if (known) return known;
  const bytes = toBinary(schema, message);
  if (known === null) encodings.set(message, bytes);
  return bytes;
}
