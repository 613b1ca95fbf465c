import { BLAST_STATUSES, EMAIL_ACTIONS } from "@platform/contracts/analytics";
import { closedObject, type JsonSchema, nullableTimestamp, timestamp } from "./common.js";

// Query and response schemas of the buyer-signals and email-blast endpoints. The serializer
// writes only what a response schema names, so every field of the spec is listed; nullable
// fields are always present, null when unset.

const count = (description: string) => ({ type: "integer", minimum: 0, description });
const percent = (description: string) => ({ type: "number", minimum: 0, maximum: 100, description });

/** What recipients did with a sent email, in raw counts and latest times (a sent email, one recipient's signal). */
const engagement = {
  opens: count("Raw open count"),
  clicks: count("Raw click count"),
  replies: count("Raw reply count, auto-responders excluded"),
  lastOpenAt: nullableTimestamp("Latest open"),
  lastClickAt: nullableTimestamp("Latest click"),
  lastReplyAt: nullableTimestamp("Latest reply"),
};

const object = (id: string | undefined, properties: Record<string, unknown>, description: string): JsonSchema =>
  closedObject(properties, { id, description });

/** periodDays of every endpoint that takes one: 7, 14 or 30, anything else a 400 naming the field. */
export const periodDays = {
  type: "integer",
  enum: [7, 14, 30],
  default: 7,
  description: "Days to look back, today (UTC) included: 7, 14 or 30",
} as const;

export const ownerUserId = {
  type: "string",
  pattern: "^usr_[0-9a-z]+$",
  description: "Only this owner's blasts (usr_ id)",
};

const sender = object(
  undefined,
  { userId: { type: "string", description: "usr_ id" }, displayName: { type: "string" } },
  "Who sent it",
);

const activityItem = object(
  undefined,
  {
    date: { type: "string", format: "date", description: "YYYY-MM-DD (UTC)" },
    action: { type: "string", enum: [...EMAIL_ACTIONS] },
    count: count("Raw event count; days without activity are omitted"),
  },
  "One action's raw count on one day",
);

const activity = (id: string, description: string) =>
  object(id, { periodDays: { type: "integer" }, items: { type: "array", items: activityItem } }, description);

const rates = {
  openRate: percent("Unique openers / successfully sent, percent, one decimal"),
  clickRate: percent("Unique clickers / successfully sent, percent, one decimal"),
  replyRate: percent("Unique repliers / successfully sent, percent, one decimal"),
};
const engagementScore = percent("0 to 100, one decimal; opaque (weighs reply, click and open rates 50/30/20)");

export const analyticsResponseSchemas: JsonSchema[] = [
  object(
    "BuyerSignalsSummary",
    {
      periodDays: { type: "integer" },
      totalSent: count("Unique recipients successfully sent to in the period"),
      hadOpened: count("Of those, unique recipients who opened in the period"),
      hadClicked: count("Of those, unique recipients who clicked in the period"),
      hadReplied: count("Of those, unique recipients who replied in the period (auto-responders excluded)"),
      openedPercentage: percent("hadOpened / totalSent, percent, one decimal"),
      clickedPercentage: percent("hadClicked / totalSent, percent, one decimal"),
      repliedPercentage: percent("hadReplied / totalSent, percent, one decimal"),
    },
    "Email engagement over the period, in unique recipients",
  ),
  activity("BuyerSignalsActivity", "Raw daily counts"),
  object(
    "SentEmail",
    {
      id: { type: "string", description: "semail_ id" },
      subject: { type: "string" },
      sender,
      recipientEmails: { type: "array", items: { type: "string" } },
      sentAt: timestamp,
      ...engagement,
      lastOpenLocation: { type: ["string", "null"], description: "City-level location of the latest open" },
      emailType: { type: "string", enum: ["standard", "email-blast"] },
      blastId: { type: ["string", "null"], description: "blast_ id for email-blast, else null" },
    },
    "A sent email with its engagement",
  ),
  object(
    "RecipientSignal",
    {
      recipientEmail: { type: "string" },
      contactId: { type: ["string", "null"], description: "cont_ id of the CRM contact with this email, or null" },
      ...engagement,
    },
    "What one recipient did with the email",
  ),
  object(
    "EmailBlastSummary",
    {
      periodDays: { type: "integer" },
      totalBlasts: count("Blasts sent in the period"),
      totalRecipients: count("Sum of their recipient counts"),
      totalSuccessfulSent: count("Recipients successfully sent to (bounces and pre-send failures excluded)"),
      totalOpens: count("Raw open count"),
      totalClicks: count("Raw click count"),
      totalReplies: count("Raw reply count, auto-responders excluded"),
      openPercentage: percent("Unique openers / totalSuccessfulSent, percent, one decimal"),
      clickPercentage: percent("Unique clickers / totalSuccessfulSent, percent, one decimal"),
      replyPercentage: percent("Unique repliers / totalSuccessfulSent, percent, one decimal"),
    },
    "Email blast summary tiles",
  ),
  object(
    "TopEmailBlasts",
    {
      items: {
        type: "array",
        items: object(
          undefined,
          {
            blastId: { type: "string", description: "blast_ id" },
            blastName: { type: "string" },
            recipientCount: count("Recipients addressed"),
            successfulSentCount: count("Recipients successfully sent to"),
            uniqueOpens: count("Unique recipients who opened"),
            uniqueClicks: count("Unique recipients who clicked"),
            uniqueReplies: count("Unique recipients who replied"),
            ...rates,
            rankingScore: percent("Relative to the best blast of this answer (100); not comparable across periods"),
          },
          "A ranked blast",
        ),
      },
    },
    "Best blasts first",
  ),
  object(
    "EmailBlastRow",
    {
      blastId: { type: "string", description: "blast_ id" },
      blastName: { type: "string" },
      templateName: { type: "string" },
      sentAt: nullableTimestamp("Null while not sent"),
      sender,
      recipientCount: count("Recipients addressed"),
      ...rates,
      engagementScore,
    },
    "An email blast in the table",
  ),
  object(
    "EmailBlast",
    {
      blastId: { type: "string", description: "blast_ id" },
      summary: object(
        undefined,
        {
          blastName: { type: "string" },
          templateName: { type: "string" },
          subject: { type: "string" },
          sender,
          sentAt: nullableTimestamp("Null while not sent"),
          status: {
            type: "string",
            enum: [...BLAST_STATUSES],
          },
          recipientCount: count("Recipients addressed"),
          successfulSentCount: count("Recipients successfully sent to"),
        },
        "What the blast is",
      ),
      performance: object(
        undefined,
        {
          totalOpens: count("Raw open count"),
          totalClicks: count("Raw click count"),
          totalReplies: count("Raw reply count, auto-responders excluded"),
          ...rates,
          engagementScore,
        },
        "How it performs",
      ),
    },
    "An email blast (detail)",
  ),
  activity("EmailBlastActivity", "A blast's raw daily counts; sends is typically zero after the send date"),
  object(
    "EmailBlastRecipient",
    {
      recipientEmail: { type: "string" },
      sentAt: nullableTimestamp("When it was sent to them; null when it never was"),
      opens: count("Raw open count"),
      clicks: count("Raw click count"),
      replies: count("Raw reply count, auto-responders excluded"),
      lastOpenAt: nullableTimestamp("Latest open"),
      lastReplyAt: nullableTimestamp("Latest reply"),
      lastOpenLocation: { type: ["string", "null"], description: "City-level location of the latest open" },
    },
    "What one recipient did with the blast",
  ),
];
