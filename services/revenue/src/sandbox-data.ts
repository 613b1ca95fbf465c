import type { Stage } from "./domain/deal-schema.js";
import type { FieldDefinition, FieldType, JsonValue } from "./domain/field-values.js";
import type { InsightType } from "./domain/insight-types.js";
import type { Importance } from "./domain/model.js";
import type { QnaState } from "./domain/qna-state.js";

// The sandbox's revenue data (see sandbox.ts for how it is seeded), on the CRM records
// crm-data seeds (accounts and contacts by their agreed keys) and scheduling's sandbox
// meetings. The docs and the API test rely on its facts: a deal in every stage, Won and Lost
// included; the Q&A items of the Analytical Engines deal in every state and both directions;
// its four populated 8P records; the Madras deal still on version 1 of the schema.

const field = (key: string, label: string, type: FieldType, options: string[] = []): FieldDefinition => ({
  key,
  label,
  type,
  options,
});

export const SANDBOX_STAGES: Stage[] = [
  { name: "Discovery", outcome: "open" },
  { name: "Qualification", outcome: "open" },
  { name: "Proposal", outcome: "open" },
  { name: "Negotiation", outcome: "open" },
  { name: "Won", outcome: "won" },
  { name: "Lost", outcome: "lost" },
];

export const SANDBOX_CUSTOM_FIELDS: FieldDefinition[] = [
  field("forecastCategory", "Forecast category", "string", ["pipeline", "best-case", "commit", "omitted"]),
  field("probability", "Win probability (%)", "number"),
  field("competitor", "Main competitor", "string"),
  field("renewal", "Renewal", "boolean"),
  field("expectedGoLive", "Expected go-live", "date"),
  field("products", "Products", "array"),
  field("pricing", "Pricing terms", "object"),
];

export const SANDBOX_INSIGHT_FIELDS: Record<InsightType, FieldDefinition[]> = {
  profile: [
    field("companyOverview", "Company overview", "string"),
    field("headcount", "Headcount", "number"),
    field("initiatives", "Strategic initiatives", "array"),
  ],
  problem: [field("problemStatement", "Problem statement", "string"), field("rootCauses", "Root causes", "array")],
  pain: [field("consequences", "Consequences", "string"), field("costOfInaction", "Cost of inaction", "number")],
  power: [
    field("decisionMakers", "Decision makers", "array"),
    field("budgetHolder", "Budget holder", "string"),
    field("procurementRequired", "Procurement required", "boolean"),
  ],
  position: [
    field("alternatives", "Alternatives considered", "array"),
    field("differentiators", "Differentiators", "string"),
  ],
  phases: [field("buyingPhases", "Buying phases", "array"), field("currentPhase", "Current phase", "string")],
  process: [
    field("evaluationSteps", "Evaluation steps", "array"),
    field("securityReview", "Security review", "boolean"),
  ],
  plan: [
    field("nextStep", "Next step", "string"),
    field("targetSignDate", "Target signature date", "date"),
    field("mutualPlan", "Mutual close plan", "object"),
  ],
};

export interface SandboxDeal {
  key: string;
  org: string;
  name: string;
  stage: string;
  amount?: { value: number; currency: string };
  closeDate?: string;
  /** crm-data's account key. */
  account: string;
  accountName: string;
  /** identity's user label. */
  owner: string;
  primaryContact?: { key: string; displayName: string };
  customFields: Record<string, JsonValue>;
  crm?: { id: string; url: string };
  /** The schema version it was last written under (the default schema is at version 2). */
  schemaVersion?: number;
  createdDay: number;
  updatedDay: number;
}

export interface SandboxQna {
  key: string;
  deal: string;
  direction: "discovery" | "rfi";
  state: QnaState;
  questionText: string;
  answerText?: string;
  importance: Importance;
  linkedInsight?: { schemaType: InsightType; fieldKey: string };
  /** crm-data's contact key (rfi). */
  contact?: { key: string; displayName: string };
  /** scheduling's sandbox meeting label. */
  meeting: string;
}

export interface SandboxInsightItem {
  fieldKey: string;
  value: JsonValue;
  importance: Importance;
  rationale?: string;
  meeting?: string;
}

export interface SandboxInsight {
  deal: string;
  schemaType: InsightType;
  items: SandboxInsightItem[];
}

export const REVENUE_SANDBOX: {
  schemaVersion: number;
  deals: SandboxDeal[];
  qnas: SandboxQna[];
  insights: SandboxInsight[];
} = {
  /** Version of the default schema: version 2 added expectedGoLive. */
  schemaVersion: 2,
  deals: [
    {
      key: "analytical-expansion",
      org: "acme",
      name: "Analytical Engines: Difference Engine rollout",
      stage: "Negotiation",
      amount: { value: 240000, currency: "USD" },
      closeDate: "2026-04-30",
      account: "analytical",
      accountName: "Analytical Engines Ltd",
      owner: "acme-ae",
      primaryContact: { key: "ada-lovelace", displayName: "Ada Lovelace" },
      customFields: {
        forecastCategory: "commit",
        probability: 70,
        competitor: "Jacquard Looms",
        products: ["Deal Intelligence", "Smart Scheduling"],
        pricing: { seats: 40, termMonths: 24 },
      },
      crm: { id: "006Acme000000001AAA", url: "https://crm.example/lightning/r/Opportunity/006Acme000000001AAA/view" },
      createdDay: 400,
      updatedDay: 520,
    },
    {
      key: "babbage-holdings",
      org: "acme",
      name: "Babbage Holdings: group licence",
      stage: "Qualification",
      amount: { value: 90000, currency: "GBP" },
      closeDate: "2026-06-30",
      account: "babbage",
      accountName: "Babbage Holdings",
      owner: "acme-ae",
      customFields: { forecastCategory: "pipeline", probability: 20 },
      crm: { id: "006Acme000000002AAA", url: "https://crm.example/lightning/r/Opportunity/006Acme000000002AAA/view" },
      createdDay: 470,
      updatedDay: 505,
    },
    {
      key: "orbital-trajectory",
      org: "acme",
      name: "Orbital Mechanics: trajectory analytics",
      stage: "Proposal",
      amount: { value: 125000.5, currency: "USD" },
      closeDate: "2026-05-15",
      account: "orbital",
      accountName: "Orbital Mechanics Inc",
      owner: "acme-se",
      primaryContact: { key: "katherine-johnson", displayName: "Katherine Johnson" },
      customFields: { forecastCategory: "best-case", probability: 45, expectedGoLive: "2026-07-01" },
      createdDay: 480,
      updatedDay: 515,
    },
    {
      key: "madras-research",
      org: "acme",
      name: "Madras Mathematics: research seats",
      stage: "Discovery",
      account: "madras",
      accountName: "Madras Mathematics",
      owner: "acme-sdr",
      primaryContact: { key: "srinivasa-ramanujan", displayName: "Srinivasa Ramanujan" },
      customFields: { forecastCategory: "pipeline" },
      schemaVersion: 1,
      createdDay: 490,
      updatedDay: 490,
    },
    {
      key: "bletchley-cryptanalysis",
      org: "acme",
      name: "Bletchley Park Labs: cryptanalysis suite",
      stage: "Won",
      amount: { value: 310000, currency: "GBP" },
      closeDate: "2026-01-20",
      account: "bletchley",
      accountName: "Bletchley Park Labs",
      owner: "acme-owner",
      primaryContact: { key: "alan-turing", displayName: "Alan Turing" },
      customFields: { forecastCategory: "commit", probability: 100, renewal: false },
      crm: { id: "006Acme000000003AAA", url: "https://crm.example/lightning/r/Opportunity/006Acme000000003AAA/view" },
      createdDay: 300,
      updatedDay: 476,
    },
    {
      key: "cobol-migration",
      org: "acme",
      name: "COBOL Systems: mainframe migration",
      stage: "Lost",
      amount: { value: 55000, currency: "USD" },
      closeDate: "2025-12-12",
      account: "cobol",
      accountName: "COBOL Systems",
      owner: "acme-ae",
      primaryContact: { key: "grace-hopper", displayName: "Grace Hopper" },
      customFields: { forecastCategory: "omitted", probability: 0, competitor: "In-house build" },
      crm: { id: "006Acme000000004AAA", url: "https://crm.example/lightning/r/Opportunity/006Acme000000004AAA/view" },
      createdDay: 320,
      updatedDay: 437,
    },
    {
      key: "umbrella-wonka",
      org: "umbrella",
      name: "Wonka Industries: field team pilot",
      stage: "Discovery",
      amount: { value: 18000, currency: "USD" },
      account: "umbrella-wonka",
      accountName: "Wonka Industries",
      owner: "umbrella-rep",
      primaryContact: { key: "umbrella-charlie", displayName: "Charlie Bucket" },
      customFields: {},
      crm: { id: "006Umbr000000001AAA", url: "https://crm.example/lightning/r/Opportunity/006Umbr000000001AAA/view" },
      createdDay: 450,
      updatedDay: 460,
    },
  ],
  qnas: [
    {
      key: "budget-holder",
      deal: "analytical-expansion",
      direction: "discovery",
      state: "open",
      questionText: "Who owns the budget for the rollout?",
      importance: "high",
      linkedInsight: { schemaType: "power", fieldKey: "budgetHolder" },
      meeting: "acme-intro-completed",
    },
    {
      key: "team-size",
      deal: "analytical-expansion",
      direction: "discovery",
      state: "answered",
      questionText: "How many analysts will use the engine?",
      answerText: "Forty analysts across two sites.",
      importance: "medium",
      linkedInsight: { schemaType: "profile", fieldKey: "headcount" },
      meeting: "acme-intro-completed",
    },
    {
      key: "incumbent",
      deal: "analytical-expansion",
      direction: "discovery",
      state: "dismissed",
      questionText: "Which tool do you use today?",
      importance: "medium",
      linkedInsight: { schemaType: "position", fieldKey: "alternatives" },
      meeting: "acme-intro-completed",
    },
    {
      key: "sso",
      deal: "analytical-expansion",
      direction: "rfi",
      state: "open",
      questionText: "Do you support single sign-on with our identity provider?",
      importance: "high",
      contact: { key: "ada-lovelace", displayName: "Ada Lovelace" },
      meeting: "acme-intro-completed",
    },
    {
      key: "data-residency",
      deal: "analytical-expansion",
      direction: "rfi",
      state: "answered",
      questionText: "Can our data stay in the EU?",
      answerText: "Yes: the EU region keeps all data in Frankfurt.",
      importance: "medium",
      contact: { key: "ada-lovelace", displayName: "Ada Lovelace" },
      meeting: "acme-intro-completed",
    },
    {
      key: "punch-cards",
      deal: "analytical-expansion",
      direction: "rfi",
      state: "dismissed",
      questionText: "Can we import punch cards directly?",
      importance: "low",
      contact: { key: "ada-lovelace", displayName: "Ada Lovelace" },
      meeting: "acme-intro-completed",
    },
  ],
  insights: [
    {
      deal: "analytical-expansion",
      schemaType: "profile",
      items: [
        {
          fieldKey: "companyOverview",
          value: "Builds general-purpose calculating engines for scientific customers.",
          importance: "medium",
        },
        { fieldKey: "headcount", value: 40, importance: "medium", meeting: "acme-intro-completed" },
      ],
    },
    {
      deal: "analytical-expansion",
      schemaType: "problem",
      items: [
        {
          fieldKey: "problemStatement",
          value: "Tables are computed by hand and carry errors into production.",
          importance: "high",
          rationale: "Raised twice in the intro call.",
          meeting: "acme-intro-completed",
        },
        { fieldKey: "rootCauses", value: ["manual transcription", "no verification step"], importance: "medium" },
      ],
    },
    {
      deal: "analytical-expansion",
      schemaType: "pain",
      items: [{ fieldKey: "costOfInaction", value: 120000, importance: "high", meeting: "acme-intro-completed" }],
    },
    {
      deal: "analytical-expansion",
      schemaType: "power",
      items: [
        { fieldKey: "decisionMakers", value: ["Ada Lovelace", "Charles Babbage"], importance: "high" },
        { fieldKey: "procurementRequired", value: true, importance: "medium" },
      ],
    },
  ],
};
