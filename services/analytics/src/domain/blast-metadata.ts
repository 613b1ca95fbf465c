import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { EmailBlastMetadata } from "@platform/contracts/analytics";
import { isId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { BLAST_STATUSES, type BlastMetadata, type BlastStatus } from "./model.js";

const isStatus = (s: string): s is BlastStatus => (BLAST_STATUSES as readonly string[]).includes(s);

/** Checks one blast of UpsertEmailBlasts; a bad one is 400 invalid-field naming `at`. */
export function blastMetadataOf(m: EmailBlastMetadata, at = "blast"): BlastMetadata {
  const invalid = (field: string, why: string) =>
    problem("invalid-field", `${at}.${field} ${why}.`, { field: `${at}.${field}` });
  if (!isId("blast_", m.blastId)) throw invalid("blastId", "must be a blast_ id");
  if (!isId("org_", m.orgId)) throw invalid("orgId", "must be an org_ id");
  const name = m.name.trim();
  if (name.length < 1 || name.length > 200) throw invalid("name", "must be 1 to 200 characters");
  if (!isId("usr_", m.ownerUserId)) throw invalid("ownerUserId", "must be a usr_ id");
  if (!isStatus(m.status)) throw invalid("status", `must be one of ${BLAST_STATUSES.join(", ")}`);
  if (m.recipientCount < 0n || m.recipientCount > 10_000_000n)
    throw invalid("recipientCount", "must be 0 to 10,000,000");
  return {
    id: m.blastId,
    orgId: m.orgId,
    name,
    templateName: m.templateName.trim(),
    subject: m.subject,
    ownerUserId: m.ownerUserId,
    ownerDisplayName: m.ownerDisplayName,
    status: m.status,
    sentAt: m.sentTime ? timestampDate(m.sentTime) : null,
    recipientCount: Number(m.recipientCount),
  };
}

/** A stored row of a blast id: each org that has events or metadata for the id has its own. */
export interface StoredBlast {
  orgId: string;
  status: string | null;
  /** Whether its metadata was given (UpsertEmailBlasts), not just events counted. */
  described: boolean;
}

/**
 * Whether the metadata may replace what is stored (`stored`: the rows of the blast id, of
 * any org). Blast ids are global, so an id another org has described stays that org's; an
 * id another org's events merely named does not count (their counts are that org's own, and
 * a producer's mistake in one org must not lock the real owner out). Sent is terminal: a
 * Sent blast only takes Sent again, e.g. to correct its name.
 */
export function checkBlastChange(stored: readonly StoredBlast[], next: BlastMetadata) {
  if (stored.some((s) => s.described && s.orgId !== next.orgId)) {
    throw problem("invalid-field", `blast '${next.id}' belongs to another organization.`, { field: "orgId" });
  }
  const own = stored.find((s) => s.orgId === next.orgId);
  if (own?.status === "Sent" && next.status !== "Sent") {
    throw problem("invalid-field", `blast '${next.id}' is Sent, which is terminal; it cannot become ${next.status}.`, {
      field: "status",
    });
  }
}
