// The availability answer is not paginated: by default it covers the schedule's whole booking
// window (up to 30 days in the sandbox: about 1,300 slots and 200 KB of JSON; a 20-host round
// robin over 30 days is about 12,000 slots and 2 MB). The client asks for a narrower window by
// default; the server's default (the spec's) stays what it is, for a body with a dateRange
// nobody filled in.

/** Days of availability the client asks for when the call gives no dateRange. */
export const DEFAULT_AVAILABILITY_DAYS = 7;

const DAY_MS = 86_400_000;

/**
 * The availability body as sent: `dateRange` from `now` to `days` days later when the caller
 * gave none; unchanged when it did, or when `days` is false (the schedule's whole window).
 */
export function narrowAvailability(body: unknown, days: number | false, now: Date): unknown {
  if (days === false || typeof body !== "object" || body === null || "dateRange" in body) return body;
  const end = new Date(now.getTime() + days * DAY_MS);
  return { ...body, dateRange: { start: now.toISOString(), end: end.toISOString() } };
}
