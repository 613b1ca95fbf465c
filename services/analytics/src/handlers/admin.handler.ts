import type { ServiceImpl } from "@connectrpc/connect";
import type { AnalyticsAdminService } from "@platform/contracts/analytics";
import type { Clock } from "@platform/kit/clock";
import type { Logger } from "@platform/kit/logger";
import { problem } from "@platform/kit/problems";
import { blastMetadataOf } from "../domain/blast-metadata.js";
import { emailEventOf } from "../domain/email-event.js";
import type { Store } from "../store/index.js";

/** The largest batch IngestEmailEvents takes: one transaction should stay short. */
export const MAX_INGEST_BATCH = 5_000;
const MAX_BLAST_BATCH = 1_000;

/** The admin plane: the email-sending system's feed of events and blast metadata, behind the admin secret. */
export function adminHandlers(deps: {
  store: Store;
  clock: Clock;
  logger: Logger;
}): ServiceImpl<typeof AnalyticsAdminService> {
  const { store, clock, logger } = deps;
  return {
    async ingestEmailEvents(req) {
      if (req.events.length > MAX_INGEST_BATCH) {
        throw problem("invalid-field", `At most ${MAX_INGEST_BATCH} events per call, not ${req.events.length}.`, {
          field: "events",
        });
      }
      const events = req.events.map((e, i) => emailEventOf(e, `events[${i}]`));
      const result = await store.tx((w) => w.ingestEvents(events));
      logger.debug({ ...result }, "email events ingested");
      return result;
    },

    async upsertEmailBlasts(req) {
      if (req.blasts.length > MAX_BLAST_BATCH) {
        throw problem("invalid-field", `At most ${MAX_BLAST_BATCH} blasts per call.`, { field: "blasts" });
      }
      const blasts = req.blasts.map((b, i) => blastMetadataOf(b, `blasts[${i}]`));
      const ids = new Set(blasts.map((b) => b.id));
      if (ids.size !== blasts.length) {
        throw problem("invalid-field", "A blast id appears more than once in the request.", { field: "blasts" });
      }
      const upserted = await store.tx((w) => w.upsertBlasts(blasts, clock.now()));
      logger.info({ upserted }, "email blasts upserted");
      return { upserted };
    },
  };
}
