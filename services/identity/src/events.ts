import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PartnerGrantChangedSchema, TokenCreatedSchema, TokenRevokedSchema } from "@platform/contracts/events/identity";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { OutboxEvent } from "@platform/kit/outbox";
import type { PartnerRelationshipRecord, TokenRecord } from "./domain/model.js";

// The identity events as outbox rows. Tokens are keyed by their org and relationships by
// the parent, so each one's changes stay in order on its partition.

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
