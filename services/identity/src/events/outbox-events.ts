import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  OrganizationUpdatedSchema,
  PartnerGrantChangedSchema,
  TokenCreatedSchema,
  TokenRevokedSchema,
  UserInvitedSchema,
  UserUpdatedSchema,
} from "@platform/contracts/events/identity";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { OutboxEvent } from "@platform/kit/outbox";
import { outboxEventsOf } from "@platform/kit/outbox-events";
import type { OrganizationRecord, PartnerRelationshipRecord, TokenRecord, UserRecord } from "../domain/model.js";

// The identity events as outbox rows. Tokens, organizations and users are keyed by their org
// and relationships by the parent, so each one's changes stay in order on its partition.

const identityEvent = outboxEventsOf("identity", TOPICS.identity);

export function tokenCreatedEvent(t: TokenRecord, at: Date): OutboxEvent {
  const data = { tokenId: t.id, orgId: t.orgId, scopes: t.scopes };
  return identityEvent(EVENT_TYPES.tokenCreated, TokenCreatedSchema, data, { key: t.orgId, subject: t.id, time: at });
}

export function tokenRevokedEvent(t: TokenRecord, revokedAt: Date): OutboxEvent {
  const data = { tokenId: t.id, orgId: t.orgId, keyHash: t.keyHash, revokeTime: timestampFromDate(revokedAt) };
  return identityEvent(EVENT_TYPES.tokenRevoked, TokenRevokedSchema, data, {
    key: t.orgId,
    subject: t.id,
    time: revokedAt,
  });
}

export function partnerGrantChangedEvent(r: PartnerRelationshipRecord): OutboxEvent {
  const revoked = r.revokedAt !== null;
  const data = {
    parentOrgId: r.parentOrgId,
    childOrgId: r.childOrgId,
    grantedScopes: revoked ? [] : r.grantedScopes,
    revoked,
  };
  return identityEvent(EVENT_TYPES.partnerGrantChanged, PartnerGrantChangedSchema, data, {
    key: r.parentOrgId,
    subject: r.childOrgId,
    time: r.updatedAt,
  });
}

export function organizationUpdatedEvent(org: OrganizationRecord, changedFields: readonly string[]): OutboxEvent {
  const data = { orgId: org.id, version: BigInt(org.version), changedFields: [...changedFields] };
  return identityEvent(EVENT_TYPES.organizationUpdated, OrganizationUpdatedSchema, data, {
    key: org.id,
    subject: org.id,
    time: org.updatedAt,
  });
}

/** Who the user is, for other contexts' projections (scheduling's hosts). Identity records no time zone. */
const profileOf = (u: UserRecord) => ({
  email: u.email,
  firstName: u.firstName ?? "",
  lastName: u.lastName ?? "",
  displayName: u.displayName,
  timeZone: "",
});

/** A user's events are keyed by their org, about the user, at its last change. */
const userRow = (u: UserRecord) => ({ key: u.orgId, subject: u.id, time: u.updatedAt });

export function userInvitedEvent(u: UserRecord): OutboxEvent {
  const data = { ...profileOf(u), userId: u.id, orgId: u.orgId, role: u.role, version: BigInt(u.version) };
  return identityEvent(EVENT_TYPES.userInvited, UserInvitedSchema, data, userRow(u));
}

export function userUpdatedEvent(u: UserRecord, changedFields: readonly string[]): OutboxEvent {
  const data = {
    ...profileOf(u),
    userId: u.id,
    orgId: u.orgId,
    version: BigInt(u.version),
    changedFields: [...changedFields],
    active: u.active,
  };
  return identityEvent(EVENT_TYPES.userUpdated, UserUpdatedSchema, data, userRow(u));
}
