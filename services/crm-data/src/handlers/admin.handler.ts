import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { CrmAdminService } from "@platform/contracts/crm";
import type { Clock } from "@platform/kit/clock";
import {
  appendChat,
  appendChunks,
  ingestTx,
  reportBot,
  upsertAccounts,
  upsertContacts,
} from "../application/ingest.js";
import { botMessage } from "../messages.js";
import type { Store } from "../store/index.js";

const dateOf = (ts: Timestamp | undefined) => (ts ? timestampDate(ts) : undefined);

/** The ingestion plane: CRM sync and recording bot, behind the admin secret. */
export function adminHandlers(deps: { store: Store; clock: Clock }): ServiceImpl<typeof CrmAdminService> {
  const { store, clock } = deps;
  return {
    async upsertAccounts(req) {
      const accounts = await ingestTx(store, clock, (w, now) =>
        upsertAccounts(
          w,
          now,
          req.orgId,
          req.accounts.map((a) => ({
            ...a,
            valuation: a.valuation,
            funding: a.funding && { ...a.funding, lastRound: a.funding.lastRound },
          })),
        ),
      );
      return { accounts };
    },

    async upsertContacts(req) {
      return { contacts: await ingestTx(store, clock, (w, now) => upsertContacts(w, now, req.orgId, req.contacts)) };
    },

    async updateBotStatus(req) {
      const start = dateOf(req.meetingStartTime);
      const end = dateOf(req.meetingEndTime);
      const bot = await ingestTx(store, clock, (w, now) =>
        reportBot(w, now, {
          ...req,
          startedAt: dateOf(req.startedAt),
          endedAt: dateOf(req.endedAt),
          ...(start && end ? { meeting: { title: req.meetingTitle, start, end } } : {}),
        }),
      );
      return { bot: botMessage(bot) };
    },

    async appendTranscriptChunks(req) {
      return ingestTx(store, clock, (w) => appendChunks(w, req.orgId, req.meetingId, req.chunks));
    },

    async appendChatMessages(req) {
      return ingestTx(store, clock, (w) =>
        appendChat(
          w,
          req.orgId,
          req.meetingId,
          req.messages.map((m) => ({ ...m, sentAt: dateOf(m.sentAt) })),
        ),
      );
    },
  };
}
