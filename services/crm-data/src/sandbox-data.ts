import { sandboxData } from "@platform/sandbox";
import type { AccountFields, ContactFields } from "./domain/ingest.js";
import crmData from "./sandbox-data.json" with { type: "json" };

// The sandbox's CRM records, shared by name with revenue's sandbox (the account and contact
// keys below are the agreed ones; ids derive from them). Contacts' emails are the attendees of
// scheduling's sandbox meetings, so meeting activity and deal links resolve.

export interface SandboxAccount extends Omit<AccountFields, "crmId" | "crmUrl"> {
  key: string;
  /** Identity's org label. */
  org: string;
  /** Key of the tracked parent account. */
  parent?: string;
}

export interface SandboxContact extends Omit<ContactFields, "crmId" | "crmUrl" | "accountCrmId"> {
  key: string;
  org: string;
  account: string;
}

// The accounts and the named contacts are plain data: sandbox-data.json (bundled by esbuild,
// loaded as a module by tsx), typed here; see @platform/sandbox's data.ts.
const { accounts, contacts: named } = sandboxData<{ accounts: SandboxAccount[]; contacts: SandboxContact[] }>(crmData);

const FIRST = ["Charles", "Mary", "Herman", "Augusta", "Joseph", "Sophie", "George", "Emmy", "John", "Hedy"];
const LAST = [
  "Babbage",
  "Somerville",
  "Hollerith",
  "King",
  "Jacquard",
  "Germain",
  "Boole",
  "Noether",
  "Napier",
  "Lamarr",
];
const TITLES = ["Engineer", "Analyst", "Procurement Lead", "Operations Manager", "Finance Director"];

/** ~30 more contacts of the analytical account, keys analytical-1.., for paging and caps. */
const generated: SandboxContact[] = Array.from({ length: 30 }, (_, i) => {
  const firstName = FIRST[i % FIRST.length] as string;
  const lastName = LAST[(i * 3) % LAST.length] as string;
  return {
    key: `analytical-${i + 1}`,
    org: "acme",
    account: "analytical",
    firstName,
    lastName,
    email: `${firstName}.${lastName}.${i + 1}@analytical.example`.toLowerCase(),
    title: TITLES[i % TITLES.length] as string,
  };
});

export const CRM_SANDBOX = { accounts, contacts: [...named, ...generated] };
