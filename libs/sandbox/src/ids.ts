import { seededId } from "@platform/kit/ids";

// How every sandbox id derives from the seed and a label (a key of the sandbox definitions).
// One home, because the sandboxes refer to each other's records (a deal's account, a
// transcript's meeting, a host's user) and `platform sandbox fixtures` lists them offline.

export const sandboxOrgId = (seed: string, label: string): string => seededId("org_", seed, `org:${label}`);
export const sandboxUserId = (seed: string, label: string): string => seededId("usr_", seed, `user:${label}`);
export const sandboxTokenId = (seed: string, name: string): string => seededId("tok_", seed, `token:${name}`);
export const sandboxScheduleId = (seed: string, label: string): string => seededId("sched_", seed, `schedule:${label}`);
export const sandboxMeetingId = (seed: string, label: string): string => seededId("mtg_", seed, `meeting:${label}`);
export const sandboxBusyBlockId = (seed: string, label: string): string => seededId("busy_", seed, `busy:${label}`);
export const sandboxAccountId = (seed: string, key: string): string => seededId("acct_", seed, `account:${key}`);
export const sandboxContactId = (seed: string, key: string): string => seededId("cont_", seed, `contact:${key}`);
/** The recording bot's transcript session of a meeting. */
export const sandboxBotId = (seed: string, label: string): string => seededId("trs_", seed, `bot:${label}`);
export const sandboxSchemaId = (seed: string, org: string): string => seededId("schm_", seed, `schema:${org}:default`);
export const sandboxDealId = (seed: string, key: string): string => seededId("deal_", seed, `deal:${key}`);
export const sandboxQnaId = (seed: string, key: string): string => seededId("qna_", seed, `qna:${key}`);
export const sandboxBlastId = (seed: string, label: string): string => seededId("blast_", seed, `blast:${label}`);
export const sandboxSubscriptionId = (seed: string, label: string): string =>
  seededId("sub_", seed, `subscription:${label}`);
