import { isId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import type { ChatParties } from "./chat.js";
import type { Funding, Valuation } from "./model.js";
import { checkDate, checkEmail, checkEmployeeCount, checkRequired, normalDomain } from "./records.js";

// The ingestion plane's input rules: what a CRM sync or a recording bot may send, and how it
// is normalised before it is stored.

export const MAX_BATCH = 500;

const invalid = (field: string, why: string) => problem("invalid-field", why, { field });
const optional = (v: string | undefined): string | null => (v === undefined || v.trim() === "" ? null : v.trim());

export function checkBatch(size: number, field: string): void {
  if (size === 0) throw invalid(field, `${field} must not be empty.`);
  if (size > MAX_BATCH) throw invalid(field, `${field} takes at most ${MAX_BATCH} records per call.`);
}

export function checkOrgId(raw: string): string {
  if (!isId("org_", raw)) throw invalid("orgId", "orgId must be an org_ id.");
  return raw;
}

const currency = (raw: string, field: string) => {
  if (!/^[A-Z]{3}$/.test(raw)) throw invalid(field, `${field} must be an ISO 4217 code.`);
  return raw;
};

const amount = (n: number, field: string) => {
  if (!Number.isFinite(n) || n < 0) throw invalid(field, `${field} must be a non-negative number.`);
  return n;
};

export interface AccountFields {
  crmId: string;
  crmUrl: string;
  name: string;
  rootDomain?: string;
  fullyQualifiedDomain?: string;
  primaryIndustry?: string;
  industries: string[];
  employeeCount?: number;
  primaryLocation?: string;
  profileIconUri?: string;
  valuation?: Valuation;
  funding?: { totalRaised: number; currency: string; lastRound?: { series: string; amount: number; closedOn: string } };
  parentCrmId?: string;
  parentName?: string;
  summary?: string;
}

/** A synced account, validated and normalised (domains lower case, blanks as null). */
export function accountFields(a: AccountFields) {
  const valuation: Valuation | null = a.valuation
    ? {
        amount: amount(a.valuation.amount, "valuation.amount"),
        currency: currency(a.valuation.currency, "valuation.currency"),
        asOf: checkDate(a.valuation.asOf, "valuation.asOf"),
      }
    : null;
  const funding: Funding | null = a.funding
    ? {
        totalRaised: amount(a.funding.totalRaised, "funding.totalRaised"),
        currency: currency(a.funding.currency, "funding.currency"),
        lastRound: a.funding.lastRound
          ? {
              series: checkRequired(a.funding.lastRound.series, "funding.lastRound.series"),
              amount: amount(a.funding.lastRound.amount, "funding.lastRound.amount"),
              closedOn: checkDate(a.funding.lastRound.closedOn, "funding.lastRound.closedOn"),
            }
          : null,
      }
    : null;
  const rootDomain = optional(a.rootDomain);
  return {
    crmId: checkRequired(a.crmId, "crmId"),
    crmUrl: a.crmUrl.trim(),
    name: checkRequired(a.name, "name"),
    rootDomain: rootDomain === null ? null : normalDomain(rootDomain),
    fullyQualifiedDomain: optional(a.fullyQualifiedDomain)?.toLowerCase() ?? null,
    primaryIndustry: optional(a.primaryIndustry),
    industries: [...new Set(a.industries.map((i) => i.trim()).filter((i) => i !== ""))],
    employeeCount: checkEmployeeCount(a.employeeCount),
    primaryLocation: optional(a.primaryLocation),
    profileIconUri: optional(a.profileIconUri),
    valuation,
    funding,
    parentCrmId: optional(a.parentCrmId),
    parentName: optional(a.parentName),
    summary: optional(a.summary),
  };
}

export interface ContactFields {
  crmId: string;
  crmUrl: string;
  firstName: string;
  lastName: string;
  email: string;
  phone?: string;
  title?: string;
  accountCrmId?: string;
  profileIconUri?: string;
  linkedInUrl?: string;
  summary?: string;
}

export function contactFields(c: ContactFields) {
  if (c.firstName.trim() === "" && c.lastName.trim() === "") {
    throw invalid("lastName", "A contact needs a first or a last name.");
  }
  return {
    crmId: checkRequired(c.crmId, "crmId"),
    crmUrl: c.crmUrl.trim(),
    firstName: c.firstName.trim(),
    lastName: c.lastName.trim(),
    email: checkEmail(c.email),
    phone: optional(c.phone),
    title: optional(c.title),
    accountCrmId: optional(c.accountCrmId),
    profileIconUri: optional(c.profileIconUri),
    linkedInUrl: optional(c.linkedInUrl),
    summary: optional(c.summary),
  };
}

const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const hostIdOf = (raw: string, field: string): string | null => {
  if (raw === "") return null;
  if (!isId("usr_", raw)) throw invalid(field, `${field} must be a usr_ id or empty.`);
  return raw;
};

export interface ChunkFields {
  sequence: number;
  speaker: string;
  hostId: string;
  language: string;
  startTime: number;
  endTime: number;
  text: string;
  words: { text: string; startTime: number; endTime: number }[];
}

/** A final chunk as the bot streams it: times in seconds from meeting start, words inside the chunk. */
export function chunkFields(c: ChunkFields) {
  if (!Number.isInteger(c.sequence) || c.sequence < 0) throw invalid("sequence", "sequence must be >= 0.");
  const language = c.language.trim();
  if (!LANGUAGE.test(language)) throw invalid("language", "language must be an ISO 639 code such as en or de.");
  if (!(c.startTime >= 0 && c.endTime >= c.startTime)) {
    throw invalid("startTime", "A chunk needs 0 <= startTime <= endTime.");
  }
  for (const w of c.words) {
    if (!(w.startTime >= c.startTime && w.endTime >= w.startTime && w.endTime <= c.endTime)) {
      throw invalid("words", `Word '${w.text}' is not timed within its chunk.`);
    }
  }
  return {
    sequence: c.sequence,
    speaker: checkRequired(c.speaker, "speaker"),
    hostId: hostIdOf(c.hostId, "hostId"),
    language,
    startTime: c.startTime,
    endTime: c.endTime,
    text: c.text.trim(),
    words: c.words.map((w) => ({ text: w.text, startTime: w.startTime, endTime: w.endTime })),
  };
}

export interface ChatFields {
  sequence: number;
  sender: string;
  senderHostId: string;
  sentAt: Date | undefined;
  text: string;
  recipients: string;
  recipientHostId: string;
}

export function chatFields(m: ChatFields): ChatParties & {
  sequence: number;
  sender: string;
  sentAt: Date;
  text: string;
} {
  if (!Number.isInteger(m.sequence) || m.sequence < 0) throw invalid("sequence", "sequence must be >= 0.");
  if (m.recipients !== "everyone" && m.recipients !== "private") {
    throw invalid("recipients", "recipients must be everyone or private.");
  }
  if (!m.sentAt) throw invalid("sentAt", "sentAt is required.");
  const recipientHostId = hostIdOf(m.recipientHostId, "recipientHostId");
  if (m.recipients === "everyone" && recipientHostId !== null) {
    throw invalid("recipientHostId", "A message to everyone has no recipient.");
  }
  return {
    sequence: m.sequence,
    sender: checkRequired(m.sender, "sender"),
    senderHostId: hostIdOf(m.senderHostId, "senderHostId"),
    sentAt: m.sentAt,
    text: m.text,
    recipients: m.recipients,
    recipientHostId,
  };
}
