const timestamp = { type: "string", format: "date-time" } as const;
const userRef = {
  type: "object",
  required: ["userId", "displayName"],
  properties: { userId: { type: "string", description: "usr_ id" }, displayName: { type: "string" } },
  additionalProperties: false,
} as const;

export const organizationSchema = {
  $id: "Organization",
  type: "object",
  required: [
    "id",
    "name",
    "primaryEmailDomain",
    "emailDomains",
    "administrator",
    "industry",
    "employeeCount",
    "logoUrl",
    "sourceRefs",
    "createdAt",
    "updatedAt",
  ],
  properties: {
    id: { type: "string", description: "org_ id" },
    name: { type: "string", maxLength: 200 },
    primaryEmailDomain: { type: "string", description: "One of emailDomains" },
    emailDomains: { type: "array", items: { type: "string" }, description: "Verified domains only" },
    administrator: { ...userRef, description: "Contractual owner (billing contact, signatory)" },
    industry: { type: "string" },
    employeeCount: { type: "integer", minimum: 1, maximum: 1_000_000 },
    logoUrl: { type: ["string", "null"], description: "Public URL; null when unset" },
    sourceRefs: {
      type: "object",
      description: "External references; `crm` only when the CRM is connected",
      properties: {
        crm: {
          type: "object",
          required: ["orgId"],
          properties: { orgId: { type: "string", description: "Raw external org id" } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  additionalProperties: false,
} as const;

export const entitlementsSchema = {
  $id: "Entitlements",
  type: "object",
  required: ["orgId", "features", "seats", "licenseTier", "asOf"],
  properties: {
    orgId: { type: "string", description: "org_ id" },
    features: {
      type: "object",
      description: "Fixed key set; new keys are added over time, retired keys stay false for one major version",
      required: [
        "smartScheduling",
        "teamCalendarScheduling",
        "replyTracking",
        "emailBlast",
        "dealIntelApp",
        "meetingAi",
      ],
      properties: {
        smartScheduling: { type: "boolean" },
        teamCalendarScheduling: { type: "boolean" },
        replyTracking: { type: "boolean" },
        emailBlast: { type: "boolean" },
        dealIntelApp: { type: "boolean" },
        meetingAi: { type: "boolean" },
      },
      additionalProperties: false,
    },
    seats: {
      type: "object",
      required: ["total", "used", "available"],
      properties: {
        total: { type: "integer", description: "Seat cap" },
        used: { type: "integer", description: "Active users plus pending invites" },
        available: { type: "integer", description: "total - used" },
      },
      additionalProperties: false,
    },
    licenseTier: {
      type: "object",
      required: ["slug", "name"],
      properties: {
        slug: { type: "string", enum: ["free", "starter", "professional", "enterprise"] },
        name: { type: "string" },
      },
      additionalProperties: false,
    },
    asOf: { ...timestamp, description: "Time of the license snapshot" },
  },
  additionalProperties: false,
} as const;
