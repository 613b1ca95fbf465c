import { create, toJson } from "@bufbuild/protobuf";
import { AccountChangedSchema, ContactChangedSchema } from "@platform/contracts/events/crm";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { OutboxEvent } from "@platform/kit/outbox";
import type { ContactView } from "../domain/model.js";
import { displayName } from "../domain/records.js";

// crm-data's events as outbox rows: what other contexts need to reference an account or a
// contact without asking crm-data on every write. Keyed by org, so one org's changes stay in
// order on their partition.

const SOURCE = "crm-data";

export function accountChangedEvent(a: { id: string; orgId: string; name: string }, at: Date): OutboxEvent {
  const data = create(AccountChangedSchema, { accountId: a.id, orgId: a.orgId, name: a.name });
  return {
    topic: TOPICS.crm,
    key: a.orgId,
    type: EVENT_TYPES.accountChanged,
    source: SOURCE,
    subject: a.id,
    data: toJson(AccountChangedSchema, data),
    time: at,
  };
}

export function contactChangedEvent(c: ContactView, at: Date): OutboxEvent {
  const data = create(ContactChangedSchema, {
    contactId: c.id,
    orgId: c.orgId,
    accountId: c.account?.id ?? "",
    displayName: displayName(c),
    email: c.email,
  });
  return {
    topic: TOPICS.crm,
    key: c.orgId,
    type: EVENT_TYPES.contactChanged,
    source: SOURCE,
    subject: c.id,
    data: toJson(ContactChangedSchema, data),
    time: at,
  };
}
