import { setImmediate as yieldToLoop } from "node:timers/promises";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { GetAvailabilityRequest } from "@platform/contracts/scheduling";
import { problem } from "@platform/kit/problems";
import { slotStarts } from "../domain/availability.js";
import { searchRange } from "../domain/booking-window.js";
import { assertValidFormValues, formValuesHash } from "../domain/form.js";
import type { FormAnswer, HostRecord, ScheduleRecord, TimeRange } from "../domain/model.js";
import { routeHosts } from "../domain/routing.js";
import {
  SLOT_TOKEN_TAIL_BYTES,
  type SlotTokenClaims,
  type SlotTokenSigner,
  slotTokenExpiresAt,
  slotTokenSigner,
} from "../domain/slot-token.js";
import { isIanaZone } from "../domain/time-zone.js";
import type { HostStore, ScheduleStore } from "../store/index.js";
import { formValuesOf, hostCalendar } from "./booking.js";
import type { SigningPool } from "./signing-pool.js";

// Availability: an availability request checked against its schedule, routed to host groups,
// and each routed host's free slots signed into slot tokens.

const invalidRequest = (detail: string) => problem("availability-request-invalid", detail);

/** What an availability request asks for, once checked. */
export interface AvailabilityQuery {
  durationMinutes: number;
  /** The requested date range; undefined for the whole booking window. */
  requested: TimeRange | undefined;
  values: Record<string, FormAnswer>;
  preview: boolean;
}

/** The date range a request asks for; a missing bound is open (the booking window bounds it). */
function requestedRange(start: Date | undefined, end: Date | undefined): TimeRange | undefined {
  if (!start && !end) return undefined;
  if (start && end && start.getTime() > end.getTime()) throw invalidRequest("dateRange.start is after dateRange.end.");
  // The widest instants a Date can hold stand for "unbounded": searchRange intersects with the window.
  return { start: start ?? new Date(-8.64e15), end: end ?? new Date(8.64e15) };
}

/**
 * Checks a request against its schedule: the duration is one of its booking periods (never
 * snapped), the range is not inverted, the zone is IANA, and the form values fit its form
 * (422 form-validation with fieldErrors otherwise).
 */
export function availabilityQuery(schedule: ScheduleRecord, req: GetAvailabilityRequest): AvailabilityQuery {
  const durationMinutes = req.durationMinutes ?? schedule.durationMinutes;
  if (!schedule.bookingPeriods.includes(durationMinutes)) {
    throw invalidRequest(
      `durationMinutes must be one of the schedule's booking periods: ${schedule.bookingPeriods.join(", ")}.`,
    );
  }
  if (req.timeZone !== "" && !isIanaZone(req.timeZone)) {
    throw invalidRequest(`timeZone '${req.timeZone}' is not an IANA time zone.`);
  }
  const requested = requestedRange(
    req.rangeStart && timestampDate(req.rangeStart),
    req.rangeEnd && timestampDate(req.rangeEnd),
  );
  const values = formValuesOf(req.formValues);
  assertValidFormValues(schedule.matchingForm, values);
  // Valid values are answers: the validation checked each one's type.
  return { durationMinutes, requested, values: values as Record<string, FormAnswer>, preview: req.preview };
}

/**
 * One routed host's free slots: their starts and their tokens, as the head all of them share and
 * each slot's tail (domain/slot-token.ts).
 */
export interface HostAvailability {
  host: HostRecord;
  /** Slot starts, ms since the epoch, ascending. */
  starts: number[];
  durationMinutes: number;
  /** The base64url text every one of the host's tokens starts with. */
  tokenHead: string;
  /** The slots' token tails in slot order, `SLOT_TOKEN_TAIL_BYTES` each. */
  tokenTails: Buffer;
}

/**
 * Slots signed per turn of the event loop: well under 1 µs each (four MACs at a time,
 * slot-mac-lanes.ts), so a turn stays near 1–2 ms and
 * a whole month of a large round robin never holds the loop (the Kafka consumers'
 * heartbeats, other requests) for long.
 */
export const SLOTS_PER_TURN = 2_500;

/** Below this many slots a thread's hand-off costs more than signing on the loop. */
const POOLED_FROM_SLOTS = 1_000;

type Unsigned = { host: HostRecord; starts: number[] };

/** Each host's tails, signed in turns of the event loop. */
async function signOnLoop(signer: SlotTokenSigner, hosts: Unsigned[]): Promise<Buffer[]> {
  const tails: Buffer[] = [];
  let sinceYield = 0;
  for (const { host, starts } of hosts) {
    const out = Buffer.allocUnsafe(starts.length * SLOT_TOKEN_TAIL_BYTES);
    for (let from = 0; from < starts.length; from += SLOTS_PER_TURN) {
      const to = Math.min(starts.length, from + SLOTS_PER_TURN);
      if (sinceYield + (to - from) > SLOTS_PER_TURN) {
        await yieldToLoop();
        sinceYield = 0;
      }
      signer.signTails(host.userId, starts, from, to, out);
      sinceYield += to - from;
    }
    tails.push(out);
  }
  return tails;
}

/** Each host's tails, signed by the pool's threads: the hosts split between them by slot count. */
async function signInPool(
  pool: SigningPool,
  secret: string,
  claims: SlotTokenClaims,
  hosts: Unsigned[],
): Promise<Buffer[]> {
  const shares = Array.from({ length: pool.size }, () => ({ slots: 0, members: [] as number[] }));
  hosts.forEach((h, i) => {
    const lightest = shares.reduce((a, b) => (b.slots < a.slots ? b : a));
    lightest.slots += h.starts.length;
    lightest.members.push(i);
  });
  const { expiresAt, ...rest } = claims;
  const tails: Buffer[] = new Array(hosts.length);
  await Promise.all(
    shares
      .filter((share) => share.members.length > 0)
      .map(async ({ members }) => {
        const signed = await pool.signTails({
          secret,
          claims: { ...rest, expiresAtMs: expiresAt.getTime() },
          hosts: members.map((i) => ({ userId: hosts[i]!.host.userId, starts: Float64Array.from(hosts[i]!.starts) })),
        });
        members.forEach((i, k) => {
          const t = signed[k]!;
          tails[i] = Buffer.from(t.buffer, t.byteOffset, t.byteLength);
        });
      }),
  );
  return tails;
}

/**
 * The host groups the form values route to, most preferred first, each host with its signed
 * free slots in the booking window at `now` (within the requested range). Routed users who
 * are no longer assigned are skipped. Busy time of every routed host comes in one query.
 * Answers of `POOLED_FROM_SLOTS` slots or more are signed by the signing threads when there are
 * any (`pool`), else, as smaller ones are, in turns of the event loop (see `SLOTS_PER_TURN`).
 */
export async function matchHosts(
  reads: ScheduleStore & HostStore,
  schedule: ScheduleRecord,
  query: AvailabilityQuery,
  opts: { orgId: string; slotTokenSecret: string; now: Date; pool?: SigningPool | undefined },
): Promise<HostAvailability[][]> {
  const { durationMinutes } = query;
  const assignees = new Map((await reads.listAssignees(schedule.id)).map((h) => [h.userId, h]));
  const groups = routeHosts(schedule.routing, query.values)
    .map((group) => group.flatMap((userId) => assignees.get(userId) ?? []))
    .filter((group) => group.length > 0);
  const range = searchRange(schedule.bookingWindow, opts.now, query.requested);
  if (!range) {
    return groups.map((group) =>
      group.map((host) => ({ host, starts: [], durationMinutes, tokenHead: "", tokenTails: Buffer.alloc(0) })),
    );
  }
  const busy = await reads.busyTimes(
    groups.flat().map((h) => h.userId),
    range,
  );
  const claims = {
    orgId: opts.orgId,
    scheduleId: schedule.id,
    expiresAt: new Date(slotTokenExpiresAt(opts.now)),
    preview: query.preview,
    durationMinutes,
    formValuesHash: formValuesHash(query.values),
  };
  const signer = slotTokenSigner(opts.slotTokenSecret, claims);
  const slots = groups.map((group) =>
    group.map((host) => ({
      host,
      starts: slotStarts({
        host: hostCalendar(host, busy.get(host.userId) ?? []),
        range,
        durationMinutes,
        stepMinutes: schedule.stepMinutes,
      }),
    })),
  );
  const all = slots.flat();
  const count = all.reduce((n, h) => n + h.starts.length, 0);
  const pooled =
    opts.pool && opts.pool.size > 0 && count >= POOLED_FROM_SLOTS
      ? await signInPool(opts.pool, opts.slotTokenSecret, claims, all).catch(() => undefined)
      : undefined;
  const tails = pooled ?? (await signOnLoop(signer, all));
  let at = 0;
  const result = slots.map((group) =>
    group.map(({ host, starts }) => ({
      host,
      starts,
      durationMinutes,
      tokenHead: signer.head(host.userId),
      tokenTails: tails[at++]!,
    })),
  );
  return result;
}
