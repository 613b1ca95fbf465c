import type { ServiceImpl } from "@connectrpc/connect";
import type { ReferenceService } from "@platform/contracts/crm";
import type { Clock } from "@platform/kit/clock";
import { requestContext } from "@platform/kit/connect";
import { isId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { recordingBlocked } from "../domain/access.js";
import type { ContactView } from "../domain/model.js";
import { displayName } from "../domain/records.js";
import type { Store } from "../store/index.js";

const MAX_LOOKUP = 100;

/** The org the calling context acts on; another service calls on behalf of an integrator request. */
function orgOf(ctx: Parameters<typeof requestContext>[0]): string {
  const { orgId } = requestContext(ctx);
  if (!orgId) throw problem("missing-trust-header", "Reference lookups need an org context.");
  return orgId;
}

function bounded(values: readonly string[], field: string): string[] {
  if (values.length > MAX_LOOKUP) {
    throw problem("invalid-field", `${field} takes at most ${MAX_LOOKUP} values.`, { field });
  }
  return [...new Set(values)];
}

const contactReference = (c: ContactView) => ({
  contactId: c.id,
  accountId: c.account?.id ?? "",
  displayName: displayName(c),
  email: c.email,
});

/** Other contexts' questions about the CRM records of the caller's org. */
export function referenceHandlers(deps: { store: Store; clock: Clock }): ServiceImpl<typeof ReferenceService> {
  const { store, clock } = deps;
  return {
    async lookupAccounts(req, ctx) {
      const ids = bounded(req.accountIds, "accountIds").filter((id) => isId("acct_", id));
      const found = await store.lookupAccounts(orgOf(ctx), ids);
      return { accounts: found.map((a) => ({ accountId: a.id, name: a.name })) };
    },
    async lookupContacts(req, ctx) {
      const ids = bounded(req.contactIds, "contactIds").filter((id) => isId("cont_", id));
      return { contacts: (await store.lookupContacts(orgOf(ctx), ids)).map(contactReference) };
    },
    async lookupContactsByEmail(req, ctx) {
      const emails = bounded(req.emails, "emails");
      return { contacts: (await store.lookupContactsByEmail(orgOf(ctx), emails)).map(contactReference) };
    },
    async listAccountContactEmails(req, ctx) {
      if (!isId("acct_", req.accountId)) return { emails: [] };
      return { emails: await store.accountContactEmails(orgOf(ctx), req.accountId) };
    },
    async getTranscriptAvailability(req, ctx) {
      const ids = bounded(req.meetingIds, "meetingIds").filter((id) => isId("mtg_", id));
      const now = clock.now();
      const recorded = await store.recordedMeetings(orgOf(ctx), ids);
      // Exactly when GET /transcript would succeed: the same rule, with a bot and chunks present.
      const available = recorded.filter(
        (m) => !recordingBlocked({ meetingEnd: m.end, hasBot: true, chunkCount: 1, hasChat: false }, now, "transcript"),
      );
      return { availableMeetingIds: available.map((m) => m.id) };
    },
  };
}
