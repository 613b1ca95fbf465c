import { AccountChangedSchema, ContactChangedSchema } from "@platform/contracts/events/crm";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { OutboxEvent } from "@platform/kit/outbox";
import { outboxEventsOf } from "@platform/kit/outbox-events";
import type { ContactView } from "../domain/model.js";
import { displayName } from "../domain/records.js";

// crm-data's events as outbox rows: what other contexts need to reference an account or a
// contact without asking crm-data on every write. Keyed by org, so one org's changes stay in
// order on their partition.

const crmEvent = outboxEventsOf("crm-data", TOPICS.crm);

export function accountChangedEvent(a: { id: string; orgId: string; name: string }, at: Date): OutboxEvent {
  const data = { accountId: a.id, orgId: a.orgId, name: a.name };
  return crmEvent(EVENT_TYPES.accountChanged, AccountChangedSchema, data, { key: a.orgId, subject: a.id, time: at });
}

export function contactChangedEvent(c: ContactView, at: Date): OutboxEvent {
  const data = {
    contactId: c.id,
    orgId: c.orgId,
    accountId: c.account?.id ?? "",
    displayName: displayName(c),
    email: c.email,
  };
  return crmEvent(EVENT_TYPES.contactChanged, ContactChangedSchema, data, { key: c.orgId, subject: c.id, time: at });
}
