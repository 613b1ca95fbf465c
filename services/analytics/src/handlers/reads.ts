import type { Clock } from "@platform/kit/clock";
import type { CursorCodec } from "@platform/kit/cursor";
import { findById } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import type { TxStore } from "../store/index.js";

// What the read planes (buyer signals, email blasts) share: their dependencies and the
// lookups of one sent email or blast of the caller's org by its path id.

export interface ReadDeps {
  reads: TxStore;
  clock: Clock;
  cursors: CursorCodec;
}

const sentEmailNotFound = (id: string) => problem("sent-email-not-found", `Sent email '${id}' was not found.`);
const blastNotFound = (id: string) => problem("email-blast-not-found", `Email blast '${id}' was not found.`);

/** The org's sent email (one at least one delivery of went out), or 404. */
export function visibleSentEmail(reads: Pick<TxStore, "findSentEmail">, orgId: string, raw: string) {
  return findById("semail_", raw, "sentEmailId", (id) => reads.findSentEmail(orgId, id), sentEmailNotFound);
}

/** The org's email blast, or 404. */
export function visibleBlast(reads: Pick<TxStore, "findBlast">, orgId: string, raw: string) {
  return findById("blast_", raw, "blastId", (id) => reads.findBlast(orgId, id), blastNotFound);
}
