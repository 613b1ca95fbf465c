/**
 * The title of a booked meeting: "<schedule name>: <first> <last>", e.g. "Intro call: Ada
 * Lovelace". Whitespace is trimmed and collapsed so blank parts never leave stray spaces or
 * a dangling colon.
 */
export function meetingTitle(scheduleName: string, attendee: { firstName: string; lastName: string }): string {
  const tidy = (s: string) => s.trim().replace(/\s+/g, " ");
  const name = [tidy(attendee.firstName), tidy(attendee.lastName)].filter((s) => s !== "").join(" ");
  const schedule = tidy(scheduleName);
  if (schedule === "") return name;
  if (name === "") return schedule;
  return `${schedule}: ${name}`;
}
