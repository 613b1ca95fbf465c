import { type DescMessage, fromJson, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { UserInvitedSchema, UserUpdatedSchema } from "@platform/contracts/events/identity";
import type { ConsumedMessage } from "@platform/kit/bus";
import type { Db } from "@platform/kit/db";
import { consumeEvent } from "@platform/kit/event-consumer";
import { EVENT_TYPES, type EventEnvelope } from "@platform/kit/events";
import type { Logger } from "@platform/kit/logger";
import { DEFAULT_WORKING_HOURS, hostTimeZone } from "../domain/host-defaults.js";
import { hostStore, type IdentityUser } from "../store/host.store.js";

// Hosts follow identity: every user identity invites or changes becomes (or updates) a host
// in scheduling's projection, so a user invited through the API can be a schedule's host
// without the sandbox. Identity's names and address win; the zone and working hours are
// scheduling's (defaults for a new host: see domain/host-defaults.ts).

export const HOSTS_GROUP = "scheduling-hosts";

const options = { ignoreUnknownFields: true };

function userOf(event: EventEnvelope): { user: IdentityUser; timeZone: string } | undefined {
  const read = <T extends DescMessage>(schema: T): MessageShape<T> =>
    fromJson(schema, event.data as JsonValue, options);
  let d: MessageShape<typeof UserInvitedSchema> | MessageShape<typeof UserUpdatedSchema>;
  if (event.type === EVENT_TYPES.userInvited) d = read(UserInvitedSchema);
  else if (event.type === EVENT_TYPES.userUpdated) d = read(UserUpdatedSchema);
  else return undefined;
  // An event from before identity carried the profile (no email) cannot make a host.
  if (!d.userId || !d.orgId || !d.email) return undefined;
  return {
    user: {
      userId: d.userId,
      orgId: d.orgId,
      email: d.email,
      firstName: d.firstName,
      lastName: d.lastName,
      displayName: d.displayName || [d.firstName, d.lastName].filter(Boolean).join(" ") || d.email,
      version: Number(d.version),
    },
    timeZone: d.timeZone,
  };
}

/** Applies one identity event to the hosts projection, once per event id. */
export function projectHost(deps: { db: Db; logger: Logger }, message: ConsumedMessage): Promise<void> {
  return consumeEvent(deps, HOSTS_GROUP, message, userOf, async (q, { user, timeZone }) => {
    await hostStore(q).applyIdentityUser(user, {
      timeZone: hostTimeZone(timeZone),
      workingHours: DEFAULT_WORKING_HOURS,
    });
  });
}
