import type { ServiceImpl } from "@connectrpc/connect";
import type { EmailBlastService } from "@platform/contracts/analytics";
import { apiContext } from "@platform/kit/connect";
import { isId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { ACTIONS } from "../domain/delivery.js";
import { periodDays, periodStart } from "../domain/period.js";
import { percentage, rankingScores, ratesOf, topLimit } from "../domain/rates.js";
import { blastDetailMessage, blastRecipientMessage, blastRowMessage, topBlastMessage } from "../messages.js";
import { BLAST_SORT_KEYS } from "../store/blast.store.js";
import { DELIVERY_SORT_KEYS } from "../store/sent-email.store.js";
import { type ReadDeps, visibleBlast } from "./reads.js";

const BLAST_SORTS = ["sentAt", "openRate", "clickRate", "replyRate", "engagementScore", "recipientCount"];
const RECIPIENT_SORTS = ["lastReplyAt", "lastOpenAt", "replies", "opens", "sentAt"];

function ownerOf(raw: string): string {
  if (raw !== "" && !isId("usr_", raw)) {
    throw problem("invalid-filter", `ownerUserId '${raw}' is not a usr_ id.`, { field: "ownerUserId" });
  }
  return raw;
}

/** Email blasts of the caller's org. */
export function emailBlastHandlers(deps: ReadDeps): ServiceImpl<typeof EmailBlastService> {
  const { reads, clock, cursors } = deps;

  return {
    async getEmailBlastSummary(req, ctx) {
      const { orgId } = apiContext(ctx);
      const days = periodDays(req.periodDays);
      const t = await reads.blastTotals(orgId, {
        since: periodStart(clock.now(), days),
        ownerUserId: ownerOf(req.ownerUserId),
      });
      return {
        periodDays: days,
        totalBlasts: BigInt(t.totalBlasts),
        totalRecipients: BigInt(t.totalRecipients),
        totalSuccessfulSent: BigInt(t.successfulSent),
        totalOpens: BigInt(t.totalOpens),
        totalClicks: BigInt(t.totalClicks),
        totalReplies: BigInt(t.totalReplies),
        openPercentage: percentage(t.uniqueOpens, t.successfulSent),
        clickPercentage: percentage(t.uniqueClicks, t.successfulSent),
        replyPercentage: percentage(t.uniqueReplies, t.successfulSent),
      };
    },

    async listTopEmailBlasts(req, ctx) {
      const { orgId } = apiContext(ctx);
      const days = periodDays(req.periodDays);
      const blasts = await reads.topBlasts(
        orgId,
        { since: periodStart(clock.now(), days), ownerUserId: ownerOf(req.ownerUserId) },
        topLimit(req.limit),
      );
      const scores = rankingScores(blasts.map((b) => ratesOf(b).engagementScore));
      return { items: blasts.map((b, i) => topBlastMessage(b, scores[i] ?? 0)) };
    },

    async listEmailBlasts(req, ctx) {
      const { orgId } = apiContext(ctx);
      const days = periodDays(req.periodDays);
      const filter = {
        since: periodStart(clock.now(), days),
        ownerUserId: ownerOf(req.ownerUserId),
        search: req.search.trim().toLowerCase(),
      };
      const sort = parseSort(req.sort, BLAST_SORTS, "-sentAt");
      const page = await keysetPage(cursors, BLAST_SORT_KEYS, sort, req, (query) =>
        reads.listBlasts(orgId, filter, query),
      );
      return { blasts: page.items.map(blastRowMessage), nextCursor: page.nextCursor ?? "" };
    },

    async getEmailBlast(req, ctx) {
      const { orgId } = apiContext(ctx);
      return { blast: blastDetailMessage(await visibleBlast(reads, orgId, req.blastId)) };
    },

    async getEmailBlastActivity(req, ctx) {
      const { orgId } = apiContext(ctx);
      const blast = await visibleBlast(reads, orgId, req.blastId);
      const days = periodDays(req.periodDays);
      const items = await reads.blastActivity(orgId, blast.id, periodStart(clock.now(), days), ACTIONS);
      return { periodDays: days, items: items.map((i) => ({ ...i, count: BigInt(i.count) })) };
    },

    async listEmailBlastRecipients(req, ctx) {
      const { orgId } = apiContext(ctx);
      const blast = await visibleBlast(reads, orgId, req.blastId);
      const sort = parseSort(req.sort, RECIPIENT_SORTS, "-lastOpenAt");
      const page = await keysetPage(cursors, DELIVERY_SORT_KEYS, sort, req, (query) =>
        reads.listDeliveries(
          { blastId: blast.id, orgId },
          { ...query, hasReplied: req.hasReplied, search: req.search.trim().toLowerCase() },
        ),
      );
      return { recipients: page.items.map(blastRecipientMessage), nextCursor: page.nextCursor ?? "" };
    },
  };
}
