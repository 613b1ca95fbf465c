import { BLAST_STATUSES } from "@platform/contracts/analytics";
import type { UniqueCounts } from "./rates.js";

/** The spec's blast status values (the contracts' list, which the gateway documents). */
export { BLAST_STATUSES };
export type BlastStatus = (typeof BLAST_STATUSES)[number];

export interface SentEmailRecord {
  id: string;
  subject: string;
  senderUserId: string;
  senderDisplayName: string;
  blastId: string | null;
  recipientEmails: string[];
  sentAt: Date;
  opens: number;
  clicks: number;
  replies: number;
  lastOpenAt: Date | null;
  lastClickAt: Date | null;
  lastReplyAt: Date | null;
  lastOpenLocation: string | null;
}

/** What describes a blast, as the sending system gives it. */
interface BlastDescription {
  id: string;
  orgId: string;
  name: string;
  templateName: string;
  subject: string;
  ownerUserId: string;
  ownerDisplayName: string;
  sentAt: Date | null;
  recipientCount: number;
}

/** A described blast with the counters ingestion maintains (its status as stored). */
export interface BlastRecord extends UniqueCounts, BlastDescription {
  status: string;
  totalOpens: number;
  totalClicks: number;
  totalReplies: number;
}

/** Blast metadata as the sending system gives it (UpsertEmailBlasts). */
export interface BlastMetadata extends BlastDescription {
  status: BlastStatus;
}
