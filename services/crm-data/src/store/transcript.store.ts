import type { Queryable, Row } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import type { BotState } from "../domain/bot.js";
import { chatVisibleSql } from "../domain/chat.js";
import type { BotRecord, BotView, ChatRecord, ChunkRecord, WordRecord } from "../domain/model.js";
import { toDate, toNullableString } from "./rows.js";

// What recording bots report: the bot of a meeting, its transcript chunks and the chat.

// Keyset positions are integers or text: start times (float seconds) page as milliseconds.
export const CHUNK_SORT_KEYS: Record<string, SortKey> = {
  startTime: { expr: "CAST(round(ch.start_time * 1000) AS int)", type: "int", nullable: false },
};

export const CHAT_SORT_KEYS: Record<string, SortKey> = {
  sentAt: { expr: "m.sent_at", type: "timestamptz", nullable: false },
};

export interface ChunkFilter extends PageQuery {
  language: string;
  speaker: string;
  hostId: string;
}

const toBot = (r: Row): BotView => ({
  meetingId: String(r.meeting_id),
  orgId: String(r.org_id),
  botId: String(r.bot_id),
  ownerUserId: String(r.owner_user_id),
  status: r.status as BotState,
  startedAt: r.started_at ? toDate(r.started_at) : null,
  endedAt: r.ended_at ? toDate(r.ended_at) : null,
  joinUrl: String(r.join_url),
  provider: String(r.provider),
  recordingAvailable: Boolean(r.recording_available),
  errorReason: toNullableString(r.error_reason),
  chunkCount: Number(r.chunk_count ?? 0),
  hasChat: Boolean(r.has_chat),
});

const toChunk = (r: Row): ChunkRecord => ({
  id: String(r.id),
  meetingId: String(r.meeting_id),
  sequence: Number(r.sequence),
  speaker: String(r.speaker),
  hostId: toNullableString(r.host_id),
  language: String(r.language),
  startTime: Number(r.start_time),
  endTime: Number(r.end_time),
  text: String(r.text),
  words: (r.words as WordRecord[]) ?? [],
});

const toChat = (r: Row): ChatRecord => ({
  id: String(r.id),
  meetingId: String(r.meeting_id),
  sequence: Number(r.sequence),
  sender: String(r.sender),
  senderHostId: toNullableString(r.sender_host_id),
  sentAt: toDate(r.sent_at),
  text: String(r.text),
  recipients: r.recipients as "everyone" | "private",
  recipientHostId: toNullableString(r.recipient_host_id),
});

const BOT_SELECT = `SELECT b.*, (SELECT count(*) FROM crm.transcript_chunks ch WHERE ch.meeting_id = b.meeting_id)
  AS chunk_count, EXISTS (SELECT 1 FROM crm.chat_messages cm WHERE cm.meeting_id = b.meeting_id) AS has_chat
  FROM crm.bots b`;

/** What recording bots report: the bot of a meeting, its transcript chunks and the chat. */
export interface TranscriptStore {
  findBot(orgId: string, meetingId: string): Promise<BotView | undefined>;
  /** Bots of the given meetings that have at least one chunk, with their meeting's end. */
  recordedMeetings(orgId: string, meetingIds: readonly string[]): Promise<{ id: string; end: Date }[]>;
  /** Creates or updates the meeting's bot; the bot id of a meeting never changes (the row keeps the first). */
  upsertBot(b: BotRecord, now: Date): Promise<void>;
  /** Stores chunks by sequence; repeated sequences are skipped. Resolves to how many were new. */
  appendChunks(orgId: string, chunks: readonly Omit<ChunkRecord, "id">[]): Promise<number>;
  appendChat(orgId: string, messages: readonly Omit<ChatRecord, "id">[]): Promise<number>;
  /** Every chunk of the meeting by start time, optionally of one language (case-insensitive). */
  allChunks(meetingId: string, language?: string): Promise<ChunkRecord[]>;
  listChunks(meetingId: string, f: ChunkFilter): Promise<Keyed<ChunkRecord>[]>;
  /** The chat a bot owned by `ownerUserId` may show, oldest first. */
  listChat(meetingId: string, ownerUserId: string, f: PageQuery): Promise<Keyed<ChatRecord>[]>;
}

export function transcriptStore(q: Queryable): TranscriptStore {
  return {
    async findBot(orgId: string, meetingId: string): Promise<BotView | undefined> {
      const [r] = await q.query(`${BOT_SELECT} WHERE b.org_id = $1 AND b.meeting_id = $2`, [orgId, meetingId]);
      return r && toBot(r);
    },

    /** Bots of the given meetings that have at least one chunk, with their meeting's end. */
    async recordedMeetings(orgId: string, meetingIds: readonly string[]): Promise<{ id: string; end: Date }[]> {
      const rows = await q.query(
        `SELECT m.id, m.end_time FROM crm.bots b JOIN crm.meetings m ON m.id = b.meeting_id
          WHERE b.org_id = $1 AND b.meeting_id = ANY($2::text[])
            AND EXISTS (SELECT 1 FROM crm.transcript_chunks ch WHERE ch.meeting_id = b.meeting_id)`,
        [orgId, meetingIds],
      );
      return rows.map((r) => ({ id: String(r.id), end: toDate(r.end_time) }));
    },

    /** Creates or updates the meeting's bot; the bot id of a meeting never changes (the row keeps the first). */
    async upsertBot(b: BotRecord, now: Date): Promise<void> {
      await q.query(
        `INSERT INTO crm.bots AS t (meeting_id, org_id, bot_id, owner_user_id, status, started_at, ended_at, join_url,
           provider, recording_available, error_reason, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (meeting_id) DO UPDATE SET owner_user_id = EXCLUDED.owner_user_id, status = EXCLUDED.status,
           started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at, join_url = EXCLUDED.join_url,
           provider = EXCLUDED.provider, recording_available = EXCLUDED.recording_available,
           error_reason = EXCLUDED.error_reason, updated_at = EXCLUDED.updated_at
         WHERE t.org_id = EXCLUDED.org_id`,
        [
          b.meetingId,
          b.orgId,
          b.botId,
          b.ownerUserId,
          b.status,
          b.startedAt,
          b.endedAt,
          b.joinUrl,
          b.provider,
          b.recordingAvailable,
          b.errorReason,
          now,
        ],
      );
    },

    /** Stores chunks by sequence; repeated sequences are skipped. Resolves to how many were new. */
    async appendChunks(orgId: string, chunks: readonly Omit<ChunkRecord, "id">[]): Promise<number> {
      let appended = 0;
      for (const c of chunks) {
        const rows = await q.query(
          `INSERT INTO crm.transcript_chunks (id, org_id, meeting_id, sequence, speaker, host_id, language,
             start_time, end_time, text, words)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT (meeting_id, sequence) DO NOTHING RETURNING id`,
          [
            newId("chnk_"),
            orgId,
            c.meetingId,
            c.sequence,
            c.speaker,
            c.hostId,
            c.language,
            c.startTime,
            c.endTime,
            c.text,
            JSON.stringify(c.words),
          ],
        );
        appended += rows.length;
      }
      return appended;
    },

    async appendChat(orgId: string, messages: readonly Omit<ChatRecord, "id">[]): Promise<number> {
      let appended = 0;
      for (const m of messages) {
        const rows = await q.query(
          `INSERT INTO crm.chat_messages (id, org_id, meeting_id, sequence, sender, sender_host_id, sent_at, text,
             recipients, recipient_host_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (meeting_id, sequence) DO NOTHING RETURNING id`,
          [
            newId("chat_"),
            orgId,
            m.meetingId,
            m.sequence,
            m.sender,
            m.senderHostId,
            m.sentAt,
            m.text,
            m.recipients,
            m.recipientHostId,
          ],
        );
        appended += rows.length;
      }
      return appended;
    },

    /** Every chunk of the meeting by start time, optionally of one language (case-insensitive). */
    async allChunks(meetingId: string, language = ""): Promise<ChunkRecord[]> {
      const rows = await q.query(
        `SELECT * FROM crm.transcript_chunks WHERE meeting_id = $1 AND ($2 = '' OR lower(language) = lower($2))
          ORDER BY start_time, sequence`,
        [meetingId, language],
      );
      return rows.map(toChunk);
    },

    async listChunks(meetingId: string, f: ChunkFilter): Promise<Keyed<ChunkRecord>[]> {
      const p = params();
      const where = [`ch.meeting_id = ${p.add(meetingId)}`];
      if (f.language !== "") where.push(`lower(ch.language) = lower(${p.add(f.language)})`);
      if (f.speaker !== "") where.push(`strpos(lower(ch.speaker), ${p.add(f.speaker.toLowerCase())}) > 0`);
      if (f.hostId !== "") where.push(`ch.host_id = ${p.add(f.hostId)}`);
      return keysetRows(
        q,
        { columns: "ch.*", from: "crm.transcript_chunks ch", where, idExpr: "ch.id" },
        f,
        p,
        toChunk,
      );
    },

    /** The chat a bot owned by `ownerUserId` may show, oldest first. */
    async listChat(meetingId: string, ownerUserId: string, f: PageQuery): Promise<Keyed<ChatRecord>[]> {
      const p = params();
      const where = [`m.meeting_id = ${p.add(meetingId)}`, chatVisibleSql(p.add(ownerUserId))];
      return keysetRows(q, { columns: "m.*", from: "crm.chat_messages m", where, idExpr: "m.id" }, f, p, toChat);
    },
  };
}
