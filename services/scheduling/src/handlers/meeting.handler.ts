import type { ServiceImpl } from "@connectrpc/connect";
import { MeetingService } from "@platform/contracts/scheduling";
import { apiContext } from "@platform/kit/connect";
import { parseId } from "@platform/kit/ids";
import {
  bookMeeting,
  cancelMeeting,
  type MeetingUseCaseDeps,
  meetingNotFound,
  rescheduleMeeting,
} from "../application/meetings.js";
import { idempotentWrite, type WriteDeps } from "../application/write.js";
import { meetingMessage } from "../messages.js";
import type { Store } from "../store/index.js";

export interface MeetingDeps extends WriteDeps, MeetingUseCaseDeps {
  store: Store;
}

/** Booking, reading, rescheduling and canceling meetings of the caller's org. */
export function meetingHandlers(deps: MeetingDeps): ServiceImpl<typeof MeetingService> {
  const { store, clock, bookingBaseUrl } = deps;

  return {
    bookMeeting: (req, ctx) =>
      bookMeeting(deps, apiContext(ctx).orgId, req, (book) =>
        idempotentWrite(deps, ctx, MeetingService.method.bookMeeting, req, book),
      ),

    async getMeeting(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("mtg_", req.meetingId, "meetingId");
      const found = await store.findMeeting(orgId, id);
      if (!found) throw meetingNotFound(id);
      return { meeting: meetingMessage(found, clock.now(), bookingBaseUrl) };
    },

    async rescheduleMeeting(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("mtg_", req.meetingId, "meetingId");
      return rescheduleMeeting(deps, { orgId, id, slotToken: req.slotToken, reason: req.reason }, (move) =>
        idempotentWrite(deps, ctx, MeetingService.method.rescheduleMeeting, req, move),
      );
    },

    async cancelMeeting(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("mtg_", req.meetingId, "meetingId");
      const cmd = { orgId, id, reason: req.reason, sendNotifications: req.sendNotifications };
      if (await cancelMeeting(deps, store, cmd)) deps.committed();
      return {};
    },
  };
}
