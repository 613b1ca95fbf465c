import type { ServiceImpl } from "@connectrpc/connect";
import type { ContactService } from "@platform/contracts/crm";
import { apiContext } from "@platform/kit/connect";
import { isId, parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { timelinePage } from "../application/listing.js";
import { activityMessage, contactMessage } from "../messages.js";
import { CONTACT_SORT_KEYS } from "../store/records.store.js";
import { CONTACT_SORTS, type ReadDeps } from "./account.handler.js";

/** Contacts of the caller's org and their timelines. */
export function contactHandlers(deps: ReadDeps): ServiceImpl<typeof ContactService> {
  const { store, cursors } = deps;
  const contactOf = async (orgId: string, raw: string) => {
    const id = parseId("cont_", raw, "contactId");
    const contact = await store.findContact(orgId, id);
    if (!contact) throw problem("contact-not-found", `Contact ${id} was not found.`);
    return contact;
  };
  return {
    async listContacts(req, ctx) {
      const { orgId } = apiContext(ctx);
      if (req.accountId !== "" && !isId("acct_", req.accountId)) {
        throw problem("invalid-filter", "accountId must be an acct_ id.", { field: "accountId" });
      }
      const sort = parseSort(req.sort, CONTACT_SORTS, "-updatedAt");
      const page = await keysetPage(cursors, CONTACT_SORT_KEYS, sort, req, (q) =>
        store.listContacts(orgId, { ...q, search: req.search, email: req.email.trim(), accountId: req.accountId }),
      );
      return { contacts: page.items.map((c) => contactMessage(c, false)), nextCursor: page.nextCursor ?? "" };
    },

    async getContact(req, ctx) {
      const { orgId } = apiContext(ctx);
      return { contact: contactMessage(await contactOf(orgId, req.contactId), true) };
    },

    async listContactActivity(req, ctx) {
      const { orgId } = apiContext(ctx);
      const contact = await contactOf(orgId, req.contactId);
      const page = await timelinePage(deps, orgId, { contactId: contact.id }, req);
      return { items: page.items.map(activityMessage), nextCursor: page.nextCursor ?? "" };
    },
  };
}
