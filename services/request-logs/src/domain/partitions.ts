import { DAY_MS, dayOf, retentionStart } from "./request-log.js";

// The table's day partitions: named after their UTC day, created a day ahead, dropped once
// every row they can hold is older than the retention window.

const NAME = /^request_logs_(\d{4})(\d{2})(\d{2})$/;

/** The partition of the day `day` (midnight UTC): request_logs_YYYYMMDD. */
export function partitionName(day: Date): string {
  return `request_logs_${day.toISOString().slice(0, 10).replaceAll("-", "")}`;
}

/** The day a partition's name stands for; undefined for another table. */
export function partitionDay(name: string): Date | undefined {
  const m = NAME.exec(name);
  return m ? new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`) : undefined;
}

/** The partitions that must exist at `now`: today's and tomorrow's (writes never wait on a new day). */
export function partitionsAhead(now: Date): Date[] {
  const today = dayOf(now);
  return [today, new Date(today.getTime() + DAY_MS)];
}

/** Of the partitions `names`, those whose whole day ended before the retention window starts. */
export function expiredPartitions(names: readonly string[], now: Date): string[] {
  const oldest = retentionStart(now).getTime();
  return names.filter((name) => {
    const day = partitionDay(name);
    return day !== undefined && day.getTime() + DAY_MS <= oldest;
  });
}
