import type { BotState } from "./bot.js";

// The records the store holds: accounts and contacts (from the CRM sync) and what recording
// bots report (the bot of a meeting, its transcript chunks and the chat).

export interface Valuation {
  amount: number;
  currency: string;
  asOf: string;
}

export interface Funding {
  totalRaised: number;
  currency: string;
  lastRound: { series: string; amount: number; closedOn: string } | null;
}

export interface AccountRecord {
  id: string;
  orgId: string;
  crmId: string;
  crmUrl: string;
  name: string;
  rootDomain: string | null;
  fullyQualifiedDomain: string | null;
  primaryIndustry: string | null;
  industries: string[];
  employeeCount: number | null;
  primaryLocation: string | null;
  profileIconUri: string | null;
  valuation: Valuation | null;
  funding: Funding | null;
  parentCrmId: string | null;
  parentName: string | null;
  summary: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An account as read, with its parent resolved among the org's accounts. */
export interface AccountView extends AccountRecord {
  parent: { id: string; name: string } | null;
}

export interface ContactRecord {
  id: string;
  orgId: string;
  crmId: string;
  crmUrl: string;
  firstName: string;
  lastName: string;
  email: string;
  phone: string | null;
  title: string | null;
  accountCrmId: string | null;
  profileIconUri: string | null;
  linkedInUrl: string | null;
  summary: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A contact as read, with its account resolved (null when it has none or it is not synced yet). */
export interface ContactView extends ContactRecord {
  account: { id: string; name: string } | null;
}

export interface BotRecord {
  meetingId: string;
  orgId: string;
  botId: string;
  ownerUserId: string;
  status: BotState;
  startedAt: Date | null;
  endedAt: Date | null;
  joinUrl: string;
  provider: string;
  recordingAvailable: boolean;
  errorReason: string | null;
}

export interface BotView extends BotRecord {
  chunkCount: number;
  hasChat: boolean;
}

export interface WordRecord {
  text: string;
  startTime: number;
  endTime: number;
}

export interface ChunkRecord {
  id: string;
  meetingId: string;
  sequence: number;
  speaker: string;
  hostId: string | null;
  language: string;
  startTime: number;
  endTime: number;
  text: string;
  words: WordRecord[];
}

export interface ChatRecord {
  id: string;
  meetingId: string;
  sequence: number;
  sender: string;
  senderHostId: string | null;
  sentAt: Date;
  text: string;
  recipients: "everyone" | "private";
  recipientHostId: string | null;
}
