import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { EmailBlastMetadata } from "@platform/contracts/analytics";
import { isId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { BLAST_STATUSES, type BlastMetadata, type BlastStatus } from "../model.js";

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

/**
 * Whether the metadata may replace what is stored: a blast id stays with its org, and Sent
 * is terminal (a Sent blast only takes Sent again, e.g. to correct its name).
 */
export function checkBlastChange(stored: { orgId: string; status: string | null } | undefined, next: BlastMetadata) {
  if (!stored) return;
  if (stored.orgId !== next.orgId) {
    throw problem("invalid-field", `blast '${next.id}' belongs to another organization.`, { field: "orgId" });
  }
  if (stored.status === "Sent" && next.status !== "Sent") {
    throw problem("invalid-field", `blast '${next.id}' is Sent, which is terminal; it cannot become ${next.status}.`, {
      field: "status",
    });
  }
}
