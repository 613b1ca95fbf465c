import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { seededId } from "@platform/kit/ids";
import {
  SANDBOX,
  sandboxAccountId,
  sandboxContactId,
  sandboxDealId,
  sandboxMeetingId,
  sandboxOrgId,
  sandboxQnaId,
  sandboxSchemaId,
  sandboxUserId,
  sandboxUserName as userName,
} from "@platform/sandbox";
import { stageOf } from "./domain/deal-schema.js";
import { INSIGHT_PREFIX, type InsightType } from "./domain/insight-types.js";
import type { DealRecord, InsightItemRecord, InsightRecordRow, QnaRecord } from "./domain/model.js";
import {
  REVENUE_SANDBOX,
  SANDBOX_CUSTOM_FIELDS,
  SANDBOX_INSIGHT_FIELDS,
  SANDBOX_STAGES,
  type SandboxDeal,
} from "./sandbox-data.js";
import { txStore } from "./store/index.js";

export * from "./sandbox-data.js";

// The deals sit on crm-data's sandbox accounts and contacts; every sandbox id derives in
// @platform/sandbox. Insight ids stay here: their prefix is revenue's insight type.
export const sandboxInsightId = (seed: string, deal: string, type: InsightType): string =>
  seededId(INSIGHT_PREFIX[type], seed, `insight:${deal}:${type}`);

const DAY_MS = 24 * 60 * 60 * 1000;
/** The sandbox agent that "captured" the seeded insights. */
const SANDBOX_AGENT = { type: "ai-agent" as const, agentName: "deal-intel-assistant" };

function dealRecord(seed: string, d: SandboxDeal, epoch: number): DealRecord {
  const stage = stageOf({ stages: SANDBOX_STAGES } as Parameters<typeof stageOf>[0], d.stage);
  if (!stage) throw new Error(`sandbox deal ${d.key} has an unknown stage`);
  return {
    id: sandboxDealId(seed, d.key),
    orgId: sandboxOrgId(seed, d.org),
    name: d.name,
    stage: stage.name,
    outcome: stage.outcome,
    amount: d.amount ?? null,
    closeDate: d.closeDate ?? null,
    account: { id: sandboxAccountId(seed, d.account), name: d.accountName },
    owner: { userId: sandboxUserId(seed, d.owner), displayName: userName(d.owner) },
    primaryContact: d.primaryContact
      ? { id: sandboxContactId(seed, d.primaryContact.key), displayName: d.primaryContact.displayName }
      : null,
    schemaId: sandboxSchemaId(seed, d.org),
    schemaVersion: d.schemaVersion ?? REVENUE_SANDBOX.schemaVersion,
    customFields: d.customFields,
    crm: d.crm ?? null,
    createdAt: new Date(epoch + d.createdDay * DAY_MS),
    updatedAt: new Date(epoch + d.updatedDay * DAY_MS),
  };
}

/**
 * Writes the sandbox in one transaction: a default deal schema for every sandbox org, and
 * Acme's (and one Umbrella) deals, Q&As and 8P records. Idempotent: when Acme's schema exists
 * it does nothing; concurrent seeders take turns on an advisory lock. Returns whether it wrote.
 */
export async function seedRevenueSandbox(db: Db, _clock: Clock, seed: string): Promise<boolean> {
  const epoch = new Date(SANDBOX.epoch).getTime();
  return db.tx(async (q) => {
    if (db.kind === "pg") await q.query("SELECT pg_advisory_xact_lock(hashtext('revenue:sandbox'))");
    const w = txStore(q);
    if (await w.findSchemaById(sandboxSchemaId(seed, "acme"))) return false;

    for (const org of SANDBOX.organizations) {
      await w.insertSchema({
        id: sandboxSchemaId(seed, org.label),
        orgId: sandboxOrgId(seed, org.label),
        name: "Default pipeline",
        isDefault: true,
        version: REVENUE_SANDBOX.schemaVersion,
        stages: SANDBOX_STAGES,
        customFields: SANDBOX_CUSTOM_FIELDS,
        insightFields: SANDBOX_INSIGHT_FIELDS,
        createdAt: new Date(epoch),
        updatedAt: new Date(epoch + 200 * DAY_MS),
      });
    }

    const deals = new Map<string, DealRecord>();
    for (const d of REVENUE_SANDBOX.deals) {
      const deal = dealRecord(seed, d, epoch);
      await w.insertDeal(deal);
      deals.set(d.key, deal);
    }

    for (const s of REVENUE_SANDBOX.qnas) {
      const deal = deals.get(s.deal);
      if (!deal) throw new Error(`sandbox Q&A ${s.key} names an unknown deal`);
      const occurredAt = new Date(deal.updatedAt.getTime() - DAY_MS);
      const qna: QnaRecord = {
        id: sandboxQnaId(seed, s.key),
        orgId: deal.orgId,
        dealId: deal.id,
        direction: s.direction,
        state: s.state,
        questionText: s.questionText,
        answerText: s.answerText ?? null,
        answer: s.answerText ? { type: "manual", confidence: 1 } : null,
        importance: s.importance,
        linkedInsight: s.linkedInsight ?? null,
        contact: s.contact ? { id: sandboxContactId(seed, s.contact.key), displayName: s.contact.displayName } : null,
        occurrences: [
          { meetingId: sandboxMeetingId(seed, s.meeting), occurredAt: occurredAt.toISOString(), source: "ai-agent" },
        ],
        createdAt: occurredAt,
        updatedAt: deal.updatedAt,
      };
      await w.insertQna(qna);
    }

    for (const s of REVENUE_SANDBOX.insights) {
      const deal = deals.get(s.deal);
      if (!deal) throw new Error(`sandbox insight ${s.deal}/${s.schemaType} names an unknown deal`);
      const fields: Record<string, InsightItemRecord[]> = Object.fromEntries(
        SANDBOX_INSIGHT_FIELDS[s.schemaType].map((f) => [f.key, []]),
      );
      s.items.forEach((item, i) => {
        const capturedAt = new Date(deal.updatedAt.getTime() - (s.items.length - i) * 60_000).toISOString();
        fields[item.fieldKey]?.push({
          itemId: seededId("insi_", seed, `insight-item:${s.deal}:${s.schemaType}:${i}`),
          value: item.value,
          importance: item.importance,
          rationale: item.rationale ?? null,
          capturedFrom: item.meeting
            ? { meetingId: sandboxMeetingId(seed, item.meeting), chunkId: null, capturedAt }
            : null,
          capturedBy: SANDBOX_AGENT,
        });
      });
      const record: InsightRecordRow = {
        id: sandboxInsightId(seed, s.deal, s.schemaType),
        orgId: deal.orgId,
        dealId: deal.id,
        schemaType: s.schemaType,
        schemaId: deal.schemaId,
        schemaVersion: REVENUE_SANDBOX.schemaVersion,
        fields,
        createdAt: deal.createdAt,
        updatedAt: deal.updatedAt,
      };
      await w.insertInsightIfAbsent(record);
    }
    return true;
  });
}
