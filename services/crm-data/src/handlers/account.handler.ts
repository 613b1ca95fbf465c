import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountService } from "@platform/contracts/crm";
import type { Clock } from "@platform/kit/clock";
import { apiContext } from "@platform/kit/connect";
import type { CursorCodec } from "@platform/kit/cursor";
import { parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { timelinePage } from "../application/listing.js";
import { normalDomain } from "../domain/records.js";
import { accountMessage, activityMessage, contactMessage } from "../messages.js";
import type { Store } from "../store/index.js";
import { ACCOUNT_SORT_KEYS, CONTACT_SORT_KEYS } from "../store/records.store.js";

export interface ReadDeps {
  store: Store;
  clock: Clock;
  cursors: CursorCodec;
}

export const CONTACT_SORTS = Object.keys(CONTACT_SORT_KEYS);

/** The org's account with that id; another org's is as absent as an unknown one. */
export async function accountOf(store: Store, orgId: string, raw: string) {
  const id = parseId("acct_", raw, "accountId");
  const account = await store.findAccount(orgId, id);
  if (!account) throw problem("account-not-found", `Account ${id} was not found.`);
  return account;
}

/** Accounts of the caller's org, their contacts and their timeline. */
export function accountHandlers(deps: ReadDeps): ServiceImpl<typeof AccountService> {
  const { store, cursors } = deps;
  return {
    async listAccounts(req, ctx) {
      const { orgId } = apiContext(ctx);
      const sort = parseSort(req.sort, Object.keys(ACCOUNT_SORT_KEYS), "-updatedAt");
      const page = await keysetPage(cursors, ACCOUNT_SORT_KEYS, sort, req, (q) =>
        store.listAccounts(orgId, { ...q, name: req.name, domain: normalDomain(req.domain), industry: req.industry }),
      );
      return { accounts: page.items.map((a) => accountMessage(a, false)), nextCursor: page.nextCursor ?? "" };
    },

    async getAccount(req, ctx) {
      const { orgId } = apiContext(ctx);
      return { account: accountMessage(await accountOf(store, orgId, req.accountId), true) };
    },

    async listAccountContacts(req, ctx) {
      const { orgId } = apiContext(ctx);
      const account = await accountOf(store, orgId, req.accountId);
      const sort = parseSort(req.sort, CONTACT_SORTS, "-updatedAt");
      const page = await keysetPage(cursors, CONTACT_SORT_KEYS, sort, req, (q) =>
        store.listContacts(orgId, { ...q, search: req.search, email: "", accountId: account.id }),
      );
      return { contacts: page.items.map((c) => contactMessage(c, false)), nextCursor: page.nextCursor ?? "" };
    },

    async listAccountActivity(req, ctx) {
      const { orgId } = apiContext(ctx);
      const account = await accountOf(store, orgId, req.accountId);
      const page = await timelinePage(deps, orgId, { accountCrmId: account.crmId }, req);
      return { items: page.items.map(activityMessage), nextCursor: page.nextCursor ?? "" };
    },
  };
}
