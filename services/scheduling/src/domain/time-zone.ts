import { IANAZone } from "luxon";

/**
 * Whether `zone` names an IANA time zone (Europe/Berlin, UTC, Etc/GMT+5). Node 22's ICU also
 * accepts UTC offsets such as "+05:30" as time zones (ECMA-402 offset zones); they are not
 * IANA names and carry no daylight-saving rules, so they are refused on every Node alike.
 */
export function isIanaZone(zone: string): boolean {
  return !/^[+-]/.test(zone) && IANAZone.isValidZone(zone);
}
