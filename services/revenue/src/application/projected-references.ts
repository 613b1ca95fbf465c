import type { Clock } from "@platform/kit/clock";
import type { RequestContext } from "@platform/kit/context";
import type { Db } from "@platform/kit/db";
import { referenceStore } from "../store/references.store.js";
import type { CrmReferences, Directory } from "./references.js";

// What a write references in other contexts, answered from revenue's own projections
// (store/references.store.ts, fed by crm-data's and identity's events), so a deal or Q&A
// write neither waits on nor fails with crm-data or identity. Only an id the projection has
// not seen yet is read through from its owner — whose answer (including its 404) is the
// answer, and is then kept. Reads that must be fresh (a deal's meetings and transcripts)
// still ask crm-data.

/**
 * One lookup of the owner's, answered from the projection first (`find`); what the owner
 * answers (`ask`) is kept (`fill`) for the next time. `F` is the owner's answer: the
 * administrator's lookup always has one, the others may answer undefined (their 404).
 */
function readThrough<K, T, F extends T | undefined>(
  clock: Clock,
  find: (orgId: string, key: K) => Promise<T | undefined>,
  ask: (ctx: RequestContext, key: K) => Promise<F>,
  fill: (orgId: string, found: T, seenAt: Date) => Promise<void>,
): (ctx: RequestContext, key: K) => Promise<T | F> {
  return async (ctx, key) => {
    const orgId = ctx.orgId ?? "";
    const known = await find(orgId, key);
    if (known) return known;
    const found = await ask(ctx, key);
    if (found) await fill(orgId, found, clock.now());
    return found;
  };
}

/** crm-data's accounts and contacts, from the projection first. */
export function projectedCrm(db: Db, owner: CrmReferences, clock: Clock): CrmReferences {
  const refs = referenceStore(db);
  return {
    account: readThrough(clock, refs.findAccount, (ctx, id) => owner.account(ctx, id), refs.fillAccount),
    contact: readThrough(clock, refs.findContact, (ctx, id) => owner.contact(ctx, id), refs.fillContact),
    accountContactEmails: (ctx, accountId) => owner.accountContactEmails(ctx, accountId),
    withTranscript: (ctx, ids) => owner.withTranscript(ctx, ids),
  };
}

/** identity's users and each organization's administrator, from the projection first. */
export function projectedDirectory(db: Db, owner: Directory, clock: Clock): Directory {
  const refs = referenceStore(db);
  const administrator = readThrough(
    clock,
    (orgId: string) => refs.findAdministrator(orgId),
    (ctx: RequestContext) => owner.administrator(ctx),
    refs.fillAdministrator,
  );
  return {
    user: readThrough(clock, refs.findUser, (ctx, userId) => owner.user(ctx, userId), refs.fillUser),
    administrator: (ctx) => administrator(ctx, undefined),
  };
}
