import type { ServiceImpl } from "@connectrpc/connect";
import type { BuyerSignalsService } from "@platform/contracts/analytics";
import { apiContext } from "@platform/kit/connect";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import type { ContactResolver } from "../application/contacts.js";
import { ACTIONS, type Action } from "../domain/delivery.js";
import { periodDays, periodStart } from "../domain/period.js";
import { percentage } from "../domain/rates.js";
import { recipientSignalMessage, sentEmailMessage } from "../messages.js";
import { DELIVERY_SORT_KEYS, SENT_EMAIL_SORT_KEYS } from "../store/sent-email.store.js";
import { type ReadDeps, visibleSentEmail } from "./reads.js";

const SENT_EMAIL_SORTS = ["sentAt", "lastReplyAt", "lastOpenAt", "lastClickAt", "replies", "opens", "clicks"];
const SIGNAL_SORTS = ["lastReplyAt", "lastOpenAt", "replies", "opens"];
const EMAIL_TYPES = ["standard", "email-blast", "all"] as const;

/** The activity's action filter: empty means all four; an unknown one is 400 invalid-filter. */
export function actionsOf(raw: readonly string[]): Action[] {
  if (raw.length === 0) return [...ACTIONS];
  for (const a of raw) {
    if (!(ACTIONS as readonly string[]).includes(a)) {
      throw problem("invalid-filter", `action '${a}' is not one of ${ACTIONS.join(", ")}.`, { field: "action" });
    }
  }
  return ACTIONS.filter((a) => raw.includes(a));
}

function emailTypeOf(raw: string): (typeof EMAIL_TYPES)[number] {
  if (raw === "") return "all";
  const found = EMAIL_TYPES.find((t) => t === raw);
  if (!found)
    throw problem("invalid-filter", `emailType '${raw}' is not one of ${EMAIL_TYPES.join(", ")}.`, {
      field: "emailType",
    });
  return found;
}

/** Buyer signals of the caller's org. */
export function buyerSignalsHandlers(
  deps: ReadDeps & { contacts: ContactResolver },
): ServiceImpl<typeof BuyerSignalsService> {
  const { reads, clock, cursors, contacts } = deps;

  return {
    async getBuyerSignalsSummary(req, ctx) {
      const { orgId } = apiContext(ctx);
      const days = periodDays(req.periodDays);
      const s = await reads.recipientSummary(orgId, periodStart(clock.now(), days));
      return {
        periodDays: days,
        totalSent: BigInt(s.totalSent),
        hadOpened: BigInt(s.hadOpened),
        hadClicked: BigInt(s.hadClicked),
        hadReplied: BigInt(s.hadReplied),
        openedPercentage: percentage(s.hadOpened, s.totalSent),
        clickedPercentage: percentage(s.hadClicked, s.totalSent),
        repliedPercentage: percentage(s.hadReplied, s.totalSent),
      };
    },

    async getBuyerSignalsActivity(req, ctx) {
      const { orgId } = apiContext(ctx);
      const days = periodDays(req.periodDays);
      const items = await reads.orgActivity(orgId, periodStart(clock.now(), days), actionsOf(req.actions));
      return { periodDays: days, items: items.map((i) => ({ ...i, count: BigInt(i.count) })) };
    },

    async listSentEmails(req, ctx) {
      const { orgId } = apiContext(ctx);
      const days = periodDays(req.periodDays);
      const emailType = emailTypeOf(req.emailType);
      const sort = parseSort(req.sort, SENT_EMAIL_SORTS, "-sentAt");
      const page = await keysetPage(cursors, SENT_EMAIL_SORT_KEYS, sort, req, (query) =>
        reads.listSentEmails(orgId, {
          ...query,
          since: periodStart(clock.now(), days),
          search: req.search.trim().toLowerCase(),
          emailType,
        }),
      );
      return { sentEmails: page.items.map(sentEmailMessage), nextCursor: page.nextCursor ?? "" };
    },

    async getSentEmail(req, ctx) {
      const { orgId } = apiContext(ctx);
      return { sentEmail: sentEmailMessage(await visibleSentEmail(reads, orgId, req.sentEmailId)) };
    },

    async listSentEmailSignals(req, ctx) {
      const caller = apiContext(ctx);
      const email = await visibleSentEmail(reads, caller.orgId, req.sentEmailId);
      const sort = parseSort(req.sort, SIGNAL_SORTS, "-lastReplyAt");
      const page = await keysetPage(cursors, DELIVERY_SORT_KEYS, sort, req, (query) =>
        reads.listDeliveries({ sentEmailId: email.id }, { ...query, hasReplied: req.hasReplied, search: "" }),
      );
      const resolved = await contacts(
        page.items.map((d) => d.recipientEmail),
        caller,
      );
      return {
        signals: page.items.map((d) => recipientSignalMessage(d, resolved.get(d.recipientEmail))),
        nextCursor: page.nextCursor ?? "",
      };
    },
  };
}
