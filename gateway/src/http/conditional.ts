import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** RFC 9110 §13.1.2: If-None-Match matches when any listed tag equals ours by weak comparison, or is `*`. */
export function noneMatchHits(ifNoneMatch: string, etag: string): boolean {
  const ours = opaque(etag);
  return ifNoneMatch.split(",").some((candidate) => {
    const tag = candidate.trim();
    return tag === "*" || opaque(tag) === ours;
  });
}

/** The quoted opaque part of an entity tag; weak comparison ignores the W/ prefix. */
function opaque(tag: string): string {
  return tag.startsWith("W/") ? tag.slice(2) : tag;
}

/** A weak validator from the bytes of the representation (before any content coding). */
export function bodyEtag(payload: string | Buffer): string {
  return `W/"${createHash("sha1").update(payload).digest("base64url")}"`;
}

function isSingleResourceRead(request: FastifyRequest, reply: FastifyReply): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  if (reply.statusCode !== 200) return false;
  // Lists change with every write anywhere in them; their pages are cursors, not resources.
  return request.routeOptions.config?.platformRoute?.page === undefined;
}

/**
 * ETag on every single-resource GET (and its HEAD), and 304 Not Modified when If-None-Match
 * names it. An ETag a handler set (users and organizations: W/"<version>", which If-Match
 * also takes) is kept as it is; other answers get a hash of their body. Registered before
 * compression, so the hash is of the JSON and a 304 skips compressing altogether.
 */
/** The request headers a single-resource answer depends on, besides its URL. */
const VARY = "X-Platform-Api-Key, X-Platform-Acting-On";

export function installConditionalGet(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    if (!isSingleResourceRead(request, reply)) return payload;
    // The same URL answers each key (and each acting-on org) with its own resource, and two
    // orgs' versions can be equal: without this a browser's or proxy's cache could answer one
    // org's 304 with another's cached body (GET /organizations/me).
    const vary = reply.getHeader("vary");
    reply.header("vary", vary === undefined ? VARY : `${String(vary)}, ${VARY}`);
    let etag = reply.getHeader("etag");
    if (etag === undefined) {
      if (typeof payload !== "string" && !Buffer.isBuffer(payload)) return payload;
      etag = bodyEtag(payload);
      reply.header("etag", etag);
    }
    const ifNoneMatch = request.headers["if-none-match"];
    if (typeof ifNoneMatch !== "string" || !noneMatchHits(ifNoneMatch, String(etag))) return payload;
    reply.code(304);
    reply.removeHeader("content-type");
    reply.removeHeader("content-length");
    // No body. Fastify's HEAD handler, which runs after this hook, cannot take null.
    return request.method === "HEAD" ? "" : null;
  });
}
