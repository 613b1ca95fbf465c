import type { WorkingHours } from "./model.js";
import { isIanaZone } from "./time-zone.js";

// What a host gets when scheduling learns of a user from identity's events: identity owns
// the names and the address, scheduling owns the zone and the working hours. Identity records
// no time zone (its user model has none), so unless its event names one a new host works in
// UTC, Monday to Friday, 09:00 to 17:00 (documented in the README's scheduling section).

export const DEFAULT_HOST_TIME_ZONE = "UTC";

/** Monday to Friday, 09:00 to 17:00 in the host's zone. */
export const DEFAULT_WORKING_HOURS: readonly WorkingHours[] = ([1, 2, 3, 4, 5] as const).map((weekday) => ({
  weekday,
  start: "09:00",
  end: "17:00",
}));

/** The zone an identity event names when the slot engine can use it, else the default. */
export function hostTimeZone(fromIdentity: string): string {
  return fromIdentity && isIanaZone(fromIdentity) ? fromIdentity : DEFAULT_HOST_TIME_ZONE;
}
