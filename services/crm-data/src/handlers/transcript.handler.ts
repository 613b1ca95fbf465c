import type { ServiceImpl } from "@connectrpc/connect";
import type { TranscriptService } from "@platform/contracts/crm";
import { apiContext } from "@platform/kit/connect";
import { parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { meetingTranscript, readableRecording } from "../application/transcripts.js";
import { botMessage, chatMessage, chunkMessage } from "../messages.js";
import { CHAT_SORT_KEYS, CHUNK_SORT_KEYS } from "../store/transcript.store.js";
import type { ReadDeps } from "./account.handler.js";

// The chat has no sort parameter: oldest first, its cursors bound to the empty sort.
const CHAT_SORT = { field: "sentAt", descending: false, key: "" };

/** Transcripts, chunks, chat and bot status of the caller's org's meetings. */
export function transcriptHandlers(deps: ReadDeps): ServiceImpl<typeof TranscriptService> {
  const { store, clock, cursors } = deps;
  return {
    async getTranscript(req, ctx) {
      const { orgId } = apiContext(ctx);
      const query = {
        orgId,
        meetingId: req.meetingId,
        startTime: req.startTime,
        endTime: req.endTime,
        language: req.language,
      };
      return { transcript: await meetingTranscript(store, clock.now(), query) };
    },

    async listTranscriptChunks(req, ctx) {
      const { orgId } = apiContext(ctx);
      const { meetingId } = await readableRecording(store, orgId, req.meetingId, clock.now(), "transcript");
      const sort = parseSort(req.sort, Object.keys(CHUNK_SORT_KEYS), "startTime");
      const page = await keysetPage(cursors, CHUNK_SORT_KEYS, sort, req, (q) =>
        store.listChunks(meetingId, { ...q, language: req.language.trim(), speaker: req.speaker, hostId: req.hostId }),
      );
      return { chunks: page.items.map((c) => chunkMessage(c, false)), nextCursor: page.nextCursor ?? "" };
    },

    async listChatMessages(req, ctx) {
      const { orgId } = apiContext(ctx);
      const { meetingId, bot } = await readableRecording(store, orgId, req.meetingId, clock.now(), "chat");
      const page = await keysetPage(cursors, CHAT_SORT_KEYS, CHAT_SORT, req, (q) =>
        store.listChat(meetingId, bot.ownerUserId, q),
      );
      return { messages: page.items.map(chatMessage), nextCursor: page.nextCursor ?? "" };
    },

    async getBotStatus(req, ctx) {
      const { orgId } = apiContext(ctx);
      const meetingId = parseId("mtg_", req.meetingId, "meetingId");
      if (!(await store.findMeeting(orgId, meetingId))) {
        throw problem("meeting-not-found", `Meeting ${meetingId} was not found.`);
      }
      const bot = await store.findBot(orgId, meetingId);
      if (!bot) throw problem("bot-not-configured", `No recording bot was configured for meeting ${meetingId}.`);
      return { bot: botMessage(bot) };
    },
  };
}
