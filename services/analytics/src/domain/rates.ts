// Every percentage and rate of the context: a share in percent with one decimal, rounded
// half up. It is computed in integer tenths of a percent, so 1 of 3 is exactly 33.3 and
// 1 of 16 (6.25 %) is 6.3, and the SQL that sorts by a rate (store/sql.ts) uses the same
// integer formula, so a list sorted by openRate agrees with the openRate it shows.

/** round_half_up(1000 × part / whole) in exact integer arithmetic; 0 when whole is 0. */
export function tenths(part: number, whole: number): number {
  if (whole <= 0) return 0;
  return Math.floor((2000 * part + whole) / (2 * whole));
}

/** part / whole in percent, one decimal (a float: 33.3). */
export function percentage(part: number, whole: number): number {
  return tenths(part, whole) / 10;
}

export interface UniqueCounts {
  successfulSent: number;
  uniqueOpens: number;
  uniqueClicks: number;
  uniqueReplies: number;
}

export interface Rates {
  openRate: number;
  clickRate: number;
  replyRate: number;
  /** 0 to 100, one decimal. */
  engagementScore: number;
}

/**
 * The engagement score weighs the three unique-recipient rates 20/30/50: a reply says more
 * than a click, a click more than an open. Each rate is at most 100, so the score is too.
 */
export function engagementTenths(openTenths: number, clickTenths: number, replyTenths: number): number {
  return Math.floor((2 * openTenths + 3 * clickTenths + 5 * replyTenths + 5) / 10);
}

export function ratesOf(c: UniqueCounts): Rates {
  const o = tenths(c.uniqueOpens, c.successfulSent);
  const k = tenths(c.uniqueClicks, c.successfulSent);
  const r = tenths(c.uniqueReplies, c.successfulSent);
  return { openRate: o / 10, clickRate: k / 10, replyRate: r / 10, engagementScore: engagementTenths(o, k, r) / 10 };
}

/**
 * Top blasts' rankingScore: each blast's engagement score relative to the best one of the
 * same answer (100.0), so it only orders the blasts of one request.
 */
export function rankingScores(engagementScores: readonly number[]): number[] {
  const best = Math.max(0, ...engagementScores);
  return engagementScores.map((s) => (best === 0 ? 0 : percentage(Math.round(s * 10), Math.round(best * 10))));
}

/** Top's limit: 1..20, 5 when unset (0). */
export function topLimit(raw: number): number {
  if (raw === 0) return 5;
  return Math.min(20, Math.max(1, raw));
}
