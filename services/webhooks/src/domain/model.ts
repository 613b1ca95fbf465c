import type { PayloadVersion } from "./payload.js";

export type DisabledReason = "disabled-by-user" | "endpoint-gone" | "failing";

export interface SubscriptionRecord {
  id: string;
  orgId: string;
  endpointUrl: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  payloadVersion: PayloadVersion;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  disabledReason: DisabledReason | null;
  disabledAt: Date | null;
  /** First failure of the current continuous run of failed attempts; null after a success. */
  failingSince: Date | null;
  /** Latest failure of that run; null after a success. */
  lastFailureAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type AttemptStatus = "pending" | "succeeded" | "failed";
export type AttemptTrigger = "event" | "retry" | "redeliver" | "test";

export interface AttemptRecord {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  trigger: AttemptTrigger;
  status: AttemptStatus;
  scheduledAt: Date;
  attemptedAt: Date | null;
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  nextRetryAt: Date | null;
  /** Position in the event's retry chain; null for single-shot attempts (redeliver, test). */
  retryStep: number | null;
  createdAt: Date;
}
