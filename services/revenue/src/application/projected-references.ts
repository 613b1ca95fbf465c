import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { referenceStore } from "../store/references.store.js";
import type { CrmReferences, Directory } from "./references.js";

// What a write references in other contexts, answered from revenue's own projections
// (store/references.store.ts, fed by crm-data's and identity's events), so a deal or Q&A
// write neither waits on nor fails with crm-data or identity. Only an id the projection has
// not seen yet is read through from its owner — whose answer (including its 404) is the
// answer, and is then kept. Reads that must be fresh (a deal's meetings and transcripts)
// still ask crm-data.

/** crm-data's accounts and contacts, from the projection first. */
export function projectedCrm(db: Db, owner: CrmReferences, clock: Clock): CrmReferences {
  const refs = referenceStore(db);
  return {
    async account(ctx, id) {
      const orgId = ctx.orgId ?? "";
      const known = await refs.findAccount(orgId, id);
      if (known) return known;
      const found = await owner.account(ctx, id);
      if (found) await refs.fillAccount(orgId, found, clock.now());
      return found;
    },
    async contact(ctx, id) {
      const orgId = ctx.orgId ?? "";
      const known = await refs.findContact(orgId, id);
      if (known) return known;
      const found = await owner.contact(ctx, id);
      if (found) await refs.fillContact(orgId, found, clock.now());
      return found;
    },
    accountContactEmails: (ctx, accountId) => owner.accountContactEmails(ctx, accountId),
    withTranscript: (ctx, ids) => owner.withTranscript(ctx, ids),
  };
}

/** identity's users and each organization's administrator, from the projection first. */
export function projectedDirectory(db: Db, owner: Directory, clock: Clock): Directory {
  const refs = referenceStore(db);
  return {
    async user(ctx, userId) {
      const orgId = ctx.orgId ?? "";
      const known = await refs.findUser(orgId, userId);
      if (known) return known;
      const found = await owner.user(ctx, userId);
      if (found) await refs.fillUser(orgId, found, clock.now());
      return found;
    },
    async administrator(ctx) {
      const orgId = ctx.orgId ?? "";
      const known = await refs.findAdministrator(orgId);
      if (known) return known;
      const found = await owner.administrator(ctx);
      await refs.fillAdministrator(orgId, found, clock.now());
      return found;
    },
  };
}
