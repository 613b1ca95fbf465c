import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { ReferenceService } from "@platform/contracts/crm";
import type { Clock } from "@platform/kit/clock";
import { onBehalfOf } from "@platform/kit/connect";
import type { RequestContext } from "@platform/kit/context";
import type { Logger } from "@platform/kit/logger";

/** Resolves recipient emails to the caller's CRM contacts: email → cont_ id; the unresolved are absent. */
export type ContactResolver = (emails: readonly string[], caller: RequestContext) => Promise<Map<string, string>>;

/** Resolves nothing: every contactId is null. */
export const noContacts: ContactResolver = async () => new Map();

// While crm-data is absent (Unimplemented), down or slow, contactId is "not resolved" (null)
// rather than the read failing: the signals themselves are analytics' own.
const QUIETLY_UNRESOLVED = new Set([Code.Unimplemented, Code.Unavailable, Code.DeadlineExceeded]);
const LOOKUP_TIMEOUT_MS = 2_000;
const MAX_EMAILS_PER_CALL = 100;

/**
 * Asks crm-data's ReferenceService on behalf of the caller: the caller's context is signed
 * again for the call, as the gateway signs it, so crm-data answers for the caller's org only.
 */
export function crmContacts(deps: {
  transport: Transport;
  contextSecret: string;
  clock: Clock;
  logger: Logger;
}): ContactResolver {
  const client = createClient(ReferenceService, deps.transport);
  return async (emails, caller) => {
    const found = new Map<string, string>();
    for (let i = 0; i < emails.length; i += MAX_EMAILS_PER_CALL) {
      try {
        const res = await client.lookupContactsByEmail(
          { emails: emails.slice(i, i + MAX_EMAILS_PER_CALL) },
          onBehalfOf(caller, deps.contextSecret, deps.clock, LOOKUP_TIMEOUT_MS),
        );
        for (const c of res.contacts) found.set(c.email.toLowerCase(), c.contactId);
      } catch (err) {
        if (!QUIETLY_UNRESOLVED.has(ConnectError.from(err).code)) {
          deps.logger.warn({ err }, "contact lookup failed; contactId left null");
        }
        return found;
      }
    }
    return found;
  };
}
