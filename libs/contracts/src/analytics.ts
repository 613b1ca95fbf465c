export * from "./gen/platform/analytics/v1/admin_pb.js";
export * from "./gen/platform/analytics/v1/buyer_signals_pb.js";
export * from "./gen/platform/analytics/v1/email_blasts_pb.js";

// Enumerations of the REST API that analytics stores and the gateway documents: one list each.

/** The spec's blast status values; Sent is terminal. */
export const BLAST_STATUSES = [
  "Draft",
  "Assigned",
  "Scheduled",
  "SendNow",
  "Rejected",
  "Processing",
  "Queued",
  "Sending",
  "Success",
  "PartialSuccess",
  "Failure",
  "Sent",
  "PastDue",
] as const;

/** What a recipient did with an email, as counted per delivery and filtered on. */
export const EMAIL_ACTIONS = ["sends", "opens", "clicks", "replies"] as const;
