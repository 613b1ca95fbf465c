import ipaddr from "ipaddr.js";

/**
 * Whether an IP address is a public unicast one a webhook may target. Everything else is
 * refused: loopback, RFC 1918, link-local, unique-local, CGNAT, multicast, documentation
 * and other reserved ranges, and IPv6 forms that embed an IPv4 address (IPv4-mapped,
 * NAT64, 6to4, Teredo) unless the embedded address is itself public.
 */
export function isPublicAddress(raw: string): boolean {
  if (!ipaddr.isValid(raw)) return false;
  let addr = ipaddr.parse(raw);
  if (addr.kind() === "ipv6") {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) addr = v6.toIPv4Address();
    else return v6.range() === "unicast";
  }
  return addr.range() === "unicast";
}

/** A URL host as an IP literal (brackets of IPv6 removed), or undefined for a name. */
export function ipLiteral(hostname: string): string | undefined {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) && (bare.includes(":") || ipaddr.IPv4.isValidFourPartDecimal(bare)) ? bare : undefined;
}

/** Names that always mean this machine, whatever DNS says. */
export function isLocalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost") || name === "localhost.localdomain";
}
