import { type DescMessage, fromJson, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { DelegatedRequestServedSchema } from "@platform/contracts/events/gateway";
import { UserInvitedSchema } from "@platform/contracts/events/identity";
import type { ConsumedMessage, Subscription } from "@platform/kit/bus";
import { type ConsumerDeps as KitConsumerDeps, subscribeGroups } from "@platform/kit/consumer";
import { consumeEvent } from "@platform/kit/event-consumer";
import { EVENT_TYPES, type EventEnvelope, TOPICS } from "@platform/kit/events";
import type { InvitationMailer } from "../application/mailer.js";
import { txStore } from "../store/index.js";

// What identity consumes: the gateway's delegated requests (into the audit log) and its own
// invitations (into emails). Both groups start from the earliest retained event, so nothing
// published before a group's first start is missed; consumeOnce makes redelivery harmless.

export const AUDIT_GROUP = "identity-delegation-audit";
export const MAILER_GROUP = "identity-invitation-mailer";

export interface ConsumerDeps extends KitConsumerDeps {
  mailer: InvitationMailer;
}

/** The data of an event of `type`, undefined for other types; throws when it cannot be read. */
const dataOf =
  <T extends DescMessage>(type: string, schema: T) =>
  (event: EventEnvelope): MessageShape<T> | undefined =>
    event.type === type ? fromJson(schema, event.data as JsonValue, { ignoreUnknownFields: true }) : undefined;

const delegatedRequestOf = dataOf(EVENT_TYPES.delegatedRequestServed, DelegatedRequestServedSchema);
const invitationOf = dataOf(EVENT_TYPES.userInvited, UserInvitedSchema);

function recordDelegatedRequest(deps: ConsumerDeps, message: ConsumedMessage): Promise<void> {
  return consumeEvent(deps, AUDIT_GROUP, message, delegatedRequestOf, async (q, data, event) => {
    await txStore(q).insertDelegationAudit({
      id: event.id,
      parentOrgId: data.parentOrgId,
      orgId: data.orgId,
      tokenId: data.tokenId,
      method: data.method,
      path: data.path,
      status: data.status,
      requestId: data.requestId,
      time: data.time ? timestampDate(data.time) : new Date(event.time),
    });
  });
}

function mailInvitation(deps: ConsumerDeps, message: ConsumedMessage): Promise<void> {
  return consumeEvent(deps, MAILER_GROUP, message, invitationOf, async (_q, data, event) => {
    try {
      await deps.mailer.sendInvitation({ orgId: data.orgId, userId: data.userId, email: data.email, role: data.role });
    } catch (err) {
      // Dispatch is best effort (the spec's 201 may precede delivery): a failed send is
      // recorded as handled, since retrying could mail twice once the provider recovers.
      deps.logger.warn({ err, userId: data.userId, eventId: event.id }, "invitation email failed");
    }
  });
}

/** Subscribes identity's consumers on `bus`; close the returned subscriptions before the bus. */
export function startIdentityConsumers(deps: ConsumerDeps): Promise<Subscription[]> {
  return subscribeGroups(deps.bus, [
    { groupId: AUDIT_GROUP, topics: [TOPICS.gateway], handler: (m) => recordDelegatedRequest(deps, m) },
    { groupId: MAILER_GROUP, topics: [TOPICS.identity], handler: (m) => mailInvitation(deps, m) },
  ]);
}
