const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * An ISO 8601 calendar date (YYYY-MM-DD) that exists: read back through Date.UTC, which
 * would roll 2026-02-30 over into March.
 */
export function isCalendarDate(raw: string): boolean {
  const m = ISO_DATE.exec(raw);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}
