import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { ReferenceService } from "@platform/contracts/crm";
import { OrganizationService, UserService } from "@platform/contracts/identity";
import type { Clock } from "@platform/kit/clock";
import { onBehalfOf } from "@platform/kit/connect";
import type { RequestContext } from "@platform/kit/context";
import type { ContactRef } from "../domain/model.js";

// What revenue asks other contexts, always on behalf of the caller: each call carries the
// caller's context, signed now, so crm-data and identity answer for the caller's org only.

/** ReferenceService's per-call cap. */
const BATCH = 100;

export type { ContactRef } from "../domain/model.js";

/** crm-data's answers about accounts, contacts and transcripts. */
export interface CrmReferences {
  account(ctx: RequestContext, id: string): Promise<{ id: string; name: string } | undefined>;
  contact(ctx: RequestContext, id: string): Promise<ContactRef | undefined>;
  /** The primary emails of the contacts of the caller's account `accountId`. */
  accountContactEmails(ctx: RequestContext, accountId: string): Promise<string[]>;
  /** The meetings among `ids` whose transcript GET would succeed now. */
  withTranscript(ctx: RequestContext, ids: readonly string[]): Promise<Set<string>>;
}

/** identity's answers about the users who own deals. */
export interface Directory {
  /** The user of the caller's org, or undefined. */
  user(ctx: RequestContext, userId: string): Promise<{ userId: string; displayName: string } | undefined>;
  /** The org's contractual owner (administrator), the default owner of a new deal. */
  administrator(ctx: RequestContext): Promise<{ userId: string; displayName: string }>;
}

function signer(secret: string, clock: Clock) {
  return (ctx: RequestContext) => onBehalfOf(ctx, secret, clock);
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

export function crmReferences(transport: Transport, contextSecret: string, clock: Clock): CrmReferences {
  const client = createClient(ReferenceService, transport);
  const sign = signer(contextSecret, clock);
  const contactOf = (c: { contactId: string; accountId: string; displayName: string; email: string }) => ({
    id: c.contactId,
    accountId: c.accountId,
    displayName: c.displayName,
    email: c.email.toLowerCase(),
  });
  return {
    async account(ctx, id) {
      const res = await client.lookupAccounts({ accountIds: [id] }, sign(ctx));
      const found = res.accounts.find((a) => a.accountId === id);
      return found && { id: found.accountId, name: found.name };
    },
    async contact(ctx, id) {
      const res = await client.lookupContacts({ contactIds: [id] }, sign(ctx));
      const found = res.contacts.find((c) => c.contactId === id);
      return found && contactOf(found);
    },
    async accountContactEmails(ctx, accountId) {
      return (await client.listAccountContactEmails({ accountId }, sign(ctx))).emails;
    },
    async withTranscript(ctx, ids) {
      const available = new Set<string>();
      for (const batch of chunks(ids)) {
        const res = await client.getTranscriptAvailability({ meetingIds: batch }, sign(ctx));
        for (const id of res.availableMeetingIds) available.add(id);
      }
      return available;
    },
  };
}

export function identityDirectory(transport: Transport, contextSecret: string, clock: Clock): Directory {
  const users = createClient(UserService, transport);
  const organizations = createClient(OrganizationService, transport);
  const sign = signer(contextSecret, clock);
  return {
    async user(ctx, userId) {
      try {
        const { user } = await users.getUser({ userId }, sign(ctx));
        return user && { userId: user.id, displayName: user.displayName };
      } catch (err) {
        if (ConnectError.from(err).code === Code.NotFound) return undefined;
        throw err;
      }
    },
    async administrator(ctx) {
      const { organization } = await organizations.getOrganization({ orgId: "" }, sign(ctx));
      const admin = organization?.administrator;
      if (!admin?.userId) throw new Error("identity returned an organization without its administrator");
      return { userId: admin.userId, displayName: admin.displayName };
    },
  };
}
