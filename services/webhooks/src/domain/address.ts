import { BlockList, isIPv6 } from "node:net";
import ipaddr from "ipaddr.js";

/** IPv6 global unicast (RFC 4291): every public IPv6 address IANA has allocated is in it. */
const GLOBAL_UNICAST: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse("2000::"), 3];

/**
 * IPv4-compatible IPv6 (::/96), matched with Node's own address parser: ipaddr.js reads the
 * dotted spelling "::a.b.c.d" as IPv4-mapped ::ffff:a.b.c.d, which would judge ::8.8.8.8 by
 * 8.8.8.8 although a socket connects to ::808:808 (and glibc prints such answers dotted).
 */
const IPV4_COMPATIBLE = new BlockList();
IPV4_COMPATIBLE.addSubnet("::", 96, "ipv6");

/**
 * Whether an IP address is a public unicast one a webhook may target. Everything else is
 * refused: loopback, RFC 1918, link-local, unique-local, CGNAT, multicast, documentation
 * and other reserved ranges. IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged by its IPv4
 * address, since sockets connect to that address. Other IPv6 forms that embed an IPv4
 * address are refused whatever it is: IPv4-compatible (::/96, deprecated by RFC 4291, and
 * ::7f00:1 would otherwise pass as "unicast"), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4
 * (2002::/16) and Teredo (2001::/32), because where they lead depends on gateways and relays
 * we cannot see, and a public receiver has a native address. IPv6 outside global unicast
 * (2000::/3), assigned to nobody today, is refused too.
 */
export function isPublicAddress(raw: string): boolean {
  if (!ipaddr.isValid(raw)) return false;
  if (isIPv6(raw) && IPV4_COMPATIBLE.check(raw, "ipv6")) return false;
  const addr = ipaddr.parse(raw);
  if (addr.kind() === "ipv4") return addr.range() === "unicast";
  const v6 = addr as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === "unicast";
  return v6.match(GLOBAL_UNICAST) && v6.range() === "unicast";
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
