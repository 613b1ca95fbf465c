import { create, toJson } from "@bufbuild/protobuf";
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
import type { OrganizationRecord, PartnerRelationshipRecord, TokenRecord, UserRecord } from "../domain/model.js";

// The identity events as outbox rows. Tokens, organizations and users are keyed by their org
// and relationships by the parent, so each one's changes stay in order on its partition.

const SOURCE = "identity";

export function tokenCreatedEvent(t: TokenRecord, at: Date): OutboxEvent {
  const data = create(TokenCreatedSchema, { tokenId: t.id, orgId: t.orgId, scopes: t.scopes });
  return {
    topic: TOPICS.identity,
    key: t.orgId,
    type: EVENT_TYPES.tokenCreated,
    source: SOURCE,
    subject: t.id,
    data: toJson(TokenCreatedSchema, data),
    time: at,
  };
}

export function tokenRevokedEvent(t: TokenRecord, revokedAt: Date): OutboxEvent {
  const data = create(TokenRevokedSchema, {
    tokenId: t.id,
    orgId: t.orgId,
    keyHash: t.keyHash,
    revokeTime: timestampFromDate(revokedAt),
  });
  return {
    topic: TOPICS.identity,
    key: t.orgId,
    type: EVENT_TYPES.tokenRevoked,
    source: SOURCE,
    subject: t.id,
    data: toJson(TokenRevokedSchema, data),
    time: revokedAt,
  };
}

export function partnerGrantChangedEvent(r: PartnerRelationshipRecord): OutboxEvent {
  const revoked = r.revokedAt !== null;
  const data = create(PartnerGrantChangedSchema, {
    parentOrgId: r.parentOrgId,
    childOrgId: r.childOrgId,
    grantedScopes: revoked ? [] : r.grantedScopes,
    revoked,
  });
  return {
    topic: TOPICS.identity,
    key: r.parentOrgId,
    type: EVENT_TYPES.partnerGrantChanged,
    source: SOURCE,
    subject: r.childOrgId,
    data: toJson(PartnerGrantChangedSchema, data),
    time: r.updatedAt,
  };
}

export function organizationUpdatedEvent(org: OrganizationRecord, changedFields: readonly string[]): OutboxEvent {
  const data = create(OrganizationUpdatedSchema, {
    orgId: org.id,
    version: BigInt(org.version),
    changedFields: [...changedFields],
  });
  return {
    topic: TOPICS.identity,
    key: org.id,
    type: EVENT_TYPES.organizationUpdated,
    source: SOURCE,
    subject: org.id,
    data: toJson(OrganizationUpdatedSchema, data),
    time: org.updatedAt,
  };
}

/** Who the user is, for other contexts' projections (scheduling's hosts). Identity records no time zone. */
const profileOf = (u: UserRecord) => ({
  email: u.email,
  firstName: u.firstName ?? "",
  lastName: u.lastName ?? "",
  displayName: u.displayName,
  timeZone: "",
});

export function userInvitedEvent(u: UserRecord): OutboxEvent {
  const data = create(UserInvitedSchema, {
    ...profileOf(u),
    userId: u.id,
    orgId: u.orgId,
    role: u.role,
    version: BigInt(u.version),
  });
  return {
    topic: TOPICS.identity,
    key: u.orgId,
    type: EVENT_TYPES.userInvited,
    source: SOURCE,
    subject: u.id,
    data: toJson(UserInvitedSchema, data),
    time: u.updatedAt,
  };
}

export function userUpdatedEvent(u: UserRecord, changedFields: readonly string[]): OutboxEvent {
  const data = create(UserUpdatedSchema, {
    ...profileOf(u),
    userId: u.id,
    orgId: u.orgId,
    version: BigInt(u.version),
    changedFields: [...changedFields],
    active: u.active,
  });
  return {
    topic: TOPICS.identity,
    key: u.orgId,
    type: EVENT_TYPES.userUpdated,
    source: SOURCE,
    subject: u.id,
    data: toJson(UserUpdatedSchema, data),
    time: u.updatedAt,
  };
}
