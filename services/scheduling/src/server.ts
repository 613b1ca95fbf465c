import { MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import type { Routes } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import type { Logger } from "@platform/kit/logger";
import { type MigrationSource, migrationsBeside } from "@platform/kit/migrate";
import type { ServiceDeps } from "@platform/kit/service-runtime";
import {
  type CalendarProvider,
  type ConferencingProvider,
  simulatedCalendar,
  simulatedConferencing,
} from "./application/providers.js";
import type { SigningPool } from "./application/signing-pool.js";
import { meetingHandlers } from "./handlers/meeting.handler.js";
import { scheduleHandlers } from "./handlers/schedule.handler.js";
import { pgStore } from "./store/index.js";

export { logNotifier, type Notice, type NoticeKind, type Notifier } from "./application/notifier.js";
export {
  type CalendarEventInput,
  type CalendarProvider,
  type ConferenceRoom,
  type ConferencingProvider,
  simulatedCalendar,
  simulatedConferencing,
} from "./application/providers.js";
export { startSchedulingConsumers } from "./events/subscriptions.js";
export {
  createHost,
  createSchedule,
  type HostDefinition,
  type ScheduleDefinition,
  seedBenchSchedule,
  seedSchedulingSandbox,
} from "./sandbox.js";

/** The service's schema: every table is `scheduling.<table>`. */
export const SCHEDULING_SCHEMA = "scheduling";

/** The service's own migrations, applied after the kit's (outbox, idempotency). */
export const schedulingMigrations: MigrationSource = migrationsBeside("scheduling", import.meta.url);

export interface SchedulingDeps extends ServiceDeps {
  logger: Logger;
  /** SLOT_TOKEN_SECRET: availability signs slot tokens with it, booking verifies them. */
  slotTokenSecret: string;
  /** BOOKING_BASE_URL: base of a meeting's reschedule and cancel links. */
  bookingBaseUrl: string;
  /** The hosts' calendar provider; the built-in simulated one by default. */
  calendar?: CalendarProvider;
  /** The video conferencing provider; the built-in simulated one by default. */
  conferencing?: ConferencingProvider;
  /** Threads that sign large availability answers' tokens; without it they are signed on the loop. */
  signingPool?: SigningPool;
  /** Called after each committed write (the tests count writes with it; outbox rows wake the relay by themselves). */
  onCommit?: () => void;
}

/** The scheduling service's Connect routes, served behind the trust interceptor. */
export function build(deps: SchedulingDeps): { routes: Routes } {
  const store = pgStore(deps.db);
  const shared = {
    db: deps.db,
    store,
    clock: deps.clock,
    logger: deps.logger,
    slotTokenSecret: deps.slotTokenSecret,
    committed: () => deps.onCommit?.(),
  };
  const schedules = scheduleHandlers({
    ...shared,
    cursors: createCursorCodec(deps.cursorSecret),
    signingPool: deps.signingPool,
  });
  const meetings = meetingHandlers({
    ...shared,
    bookingBaseUrl: deps.bookingBaseUrl,
    calendar: deps.calendar ?? simulatedCalendar(),
    conferencing: deps.conferencing ?? simulatedConferencing(),
  });
  return {
    routes: (router) => {
      router.service(SmartScheduleService, schedules);
      router.service(MeetingService, meetings);
    },
  };
}
