import type { AccountFields, ContactFields } from "./domain/ingest.js";

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

const accounts: SandboxAccount[] = [
  {
    key: "babbage",
    org: "acme",
    name: "Babbage Holdings",
    rootDomain: "babbage.example",
    fullyQualifiedDomain: "www.babbage.example",
    primaryIndustry: "Financial Services",
    industries: ["Financial Services", "Investment Management"],
    employeeCount: 2400,
    primaryLocation: "London, United Kingdom",
    profileIconUri: "https://babbage.example/logo.png",
    valuation: { amount: 1_800_000_000, currency: "GBP", asOf: "2025-12-31" },
    summary: "Holding company of engineering firms founded on Charles Babbage's designs.",
  },
  {
    key: "analytical",
    org: "acme",
    parent: "babbage",
    name: "Analytical Engines Ltd",
    rootDomain: "analytical.example",
    fullyQualifiedDomain: "www.analytical.example",
    primaryIndustry: "Computer Hardware",
    industries: ["Computer Hardware", "Manufacturing"],
    employeeCount: 640,
    primaryLocation: "London, United Kingdom",
    profileIconUri: "https://analytical.example/logo.png",
    valuation: { amount: 420_000_000, currency: "GBP", asOf: "2026-01-15" },
    funding: {
      totalRaised: 96_000_000,
      currency: "GBP",
      lastRound: { series: "Series C", amount: 60_000_000, closedOn: "2025-09-30" },
    },
    summary: "Builds general-purpose mechanical computers; evaluating a 40-seat rollout.",
  },
  {
    key: "cobol",
    org: "acme",
    name: "COBOL Systems",
    rootDomain: "cobol.example",
    fullyQualifiedDomain: "cobol.example",
    primaryIndustry: "Software",
    industries: ["Software", "Enterprise Software"],
    employeeCount: 85,
    primaryLocation: "Arlington, Virginia, United States",
    funding: {
      totalRaised: 12_500_000,
      currency: "USD",
      lastRound: { series: "Series A", amount: 9_000_000, closedOn: "2024-05-20" },
    },
    summary: "Business-oriented languages and compilers.",
  },
  {
    key: "bletchley",
    org: "acme",
    name: "Bletchley Park Labs",
    rootDomain: "bletchley.example",
    fullyQualifiedDomain: "labs.bletchley.example",
    primaryIndustry: "Research",
    industries: ["Research", "Security"],
    employeeCount: 120,
    primaryLocation: "Milton Keynes, United Kingdom",
    parentName: "Government Code and Cypher School",
    summary: "Cryptanalysis research; routing inbound leads by region.",
  },
  {
    key: "madras",
    org: "acme",
    name: "Madras Mathematics",
    rootDomain: "madras.example",
    primaryIndustry: "Education",
    industries: ["Education"],
    employeeCount: 35,
    primaryLocation: "Chennai, India",
  },
  {
    key: "orbital",
    org: "acme",
    name: "Orbital Mechanics Inc",
    rootDomain: "orbital.example",
    fullyQualifiedDomain: "www.orbital.example",
    primaryIndustry: "Aerospace",
    industries: ["Aerospace", "Research"],
    employeeCount: 5200,
    primaryLocation: "Hampton, Virginia, United States",
    valuation: { amount: 3_100_000_000, currency: "USD", asOf: "2025-06-30" },
    funding: {
      totalRaised: 410_000_000,
      currency: "USD",
      lastRound: { series: "Series E", amount: 150_000_000, closedOn: "2025-03-11" },
    },
  },
  {
    key: "umbrella-wonka",
    org: "umbrella",
    name: "Wonka Industries",
    rootDomain: "wonka.example",
    primaryIndustry: "Food & Beverage",
    industries: ["Food & Beverage"],
    employeeCount: 900,
  },
];

const named: SandboxContact[] = [
  {
    key: "ada-lovelace",
    org: "acme",
    account: "analytical",
    firstName: "Ada",
    lastName: "Lovelace",
    email: "ada.lovelace@analytical.example",
    phone: "+442079460001",
    title: "Head of Analysis",
    linkedInUrl: "https://www.linkedin.com/in/ada-lovelace-example",
    summary: "Champion of the rollout; asked about pricing for 40 seats.",
  },
  {
    key: "grace-hopper",
    org: "acme",
    account: "cobol",
    firstName: "Grace",
    lastName: "Hopper",
    email: "grace.hopper@cobol.example",
    phone: "+14155550123",
    title: "Rear Admiral of Engineering",
  },
  {
    key: "alan-turing",
    org: "acme",
    account: "bletchley",
    firstName: "Alan",
    lastName: "Turing",
    email: "alan.turing@bletchley.example",
    phone: "+442079460123",
    title: "Chief Scientist",
  },
  {
    key: "srinivasa-ramanujan",
    org: "acme",
    account: "madras",
    firstName: "Srinivasa",
    lastName: "Ramanujan",
    email: "s.ramanujan@madras.example",
    title: "Research Fellow",
  },
  {
    key: "katherine-johnson",
    org: "acme",
    account: "orbital",
    firstName: "Katherine",
    lastName: "Johnson",
    email: "k.johnson@orbital.example",
    title: "Lead Mathematician",
  },
  {
    key: "umbrella-charlie",
    org: "umbrella",
    account: "umbrella-wonka",
    firstName: "Charlie",
    lastName: "Bucket",
    email: "charlie@wonka.example",
  },
];

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
