import { ipLiteral, isLocalName, isPublicAddress } from "./address.js";

export const MAX_ENDPOINT_URL = 2048;

/** Resolves a host name to its addresses (all of them: one private answer is enough to refuse). */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface EndpointPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: local development and tests only; also admits http://. */
  allowPrivateTargets: boolean;
  resolve: Resolver;
}

export type EndpointCheck = { ok: true; url: string } | { ok: false; reason: string };

/** The URL's shape: absolute, https (http only with private targets allowed), no credentials. */
export function checkEndpointShape(raw: string, allowPrivateTargets: boolean): EndpointCheck | URL {
  if (raw.length === 0 || raw.length > MAX_ENDPOINT_URL) {
    return { ok: false, reason: `endpointUrl must be 1 to ${MAX_ENDPOINT_URL} characters.` };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "endpointUrl is not an absolute URL." };
  }
  const schemes = allowPrivateTargets ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) return { ok: false, reason: "endpointUrl must use HTTPS." };
  if (url.username || url.password) return { ok: false, reason: "endpointUrl must not carry credentials." };
  if (url.hash) return { ok: false, reason: "endpointUrl must not have a fragment." };
  return url;
}

/**
 * Whether `raw` is an endpoint a subscription may target: the shape above, and a host that is
 * neither a local name nor an address, or a name resolving to an address, outside public
 * unicast space. The same check runs again on the resolved address at delivery time.
 */
export async function checkEndpoint(raw: string, policy: EndpointPolicy): Promise<EndpointCheck> {
  const shape = checkEndpointShape(raw, policy.allowPrivateTargets);
  if (!(shape instanceof URL)) return shape;
  if (policy.allowPrivateTargets) return { ok: true, url: shape.toString() };
  const host = shape.hostname;
  if (isLocalName(host)) return { ok: false, reason: "endpointUrl must not target localhost." };
  const literal = ipLiteral(host);
  if (literal !== undefined) {
    return isPublicAddress(literal)
      ? { ok: true, url: shape.toString() }
      : { ok: false, reason: "endpointUrl must not target a loopback, private, link-local or reserved address." };
  }
  let addresses: string[];
  try {
    addresses = await policy.resolve(host);
  } catch {
    return { ok: false, reason: `endpointUrl host ${host} does not resolve.` };
  }
  if (addresses.length === 0) return { ok: false, reason: `endpointUrl host ${host} does not resolve.` };
  if (!addresses.every(isPublicAddress)) {
    return { ok: false, reason: `endpointUrl host ${host} resolves to a private or reserved address.` };
  }
  return { ok: true, url: shape.toString() };
}

/**
 * The endpoint a URL reaches, as `scheme://host:port` (lower case, trailing dot dropped, the
 * port always explicit). The delivery caps attempts in flight by it, not by subscription:
 * subscriptions sharing a receiver (an org may point all ten at one URL) share its cap, so a
 * dead receiver holds a few of a worker's slots, never all of them.
 */
export function endpointOrigin(raw: string): string {
  const url = new URL(raw);
  const defaultPort = url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : "";
  return `${url.protocol}//${url.hostname.replace(/\.$/, "")}:${url.port || defaultPort}`;
}
