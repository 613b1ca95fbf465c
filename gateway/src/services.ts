import { type CallOptions, type Client, createClient, type Transport } from "@connectrpc/connect";
import { GatewayAuthService, OrganizationService, PartnerService, UserService } from "@platform/contracts/identity";
import { MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import type { Clock } from "@platform/kit/clock";
import { CONTEXT_HEADER, IDEMPOTENT_REPLAY_HEADER, type RequestContext, signContext } from "@platform/kit/context";

/** How the gateway reaches each bounded context. */
export interface ServiceTransports {
  identity: Transport;
  scheduling: Transport;
  crm: Transport;
  revenue: Transport;
  analytics: Transport;
  webhooks: Transport;
}

/** Connect clients of the services behind the gateway. */
export interface ServiceClients {
  gatewayAuth: Client<typeof GatewayAuthService>;
  organizations: Client<typeof OrganizationService>;
  users: Client<typeof UserService>;
  partners: Client<typeof PartnerService>;
  smartSchedules: Client<typeof SmartScheduleService>;
  meetings: Client<typeof MeetingService>;
}

export function createServiceClients(transports: ServiceTransports): ServiceClients {
  return {
    gatewayAuth: createClient(GatewayAuthService, transports.identity),
    organizations: createClient(OrganizationService, transports.identity),
    users: createClient(UserService, transports.identity),
    partners: createClient(PartnerService, transports.identity),
    smartSchedules: createClient(SmartScheduleService, transports.scheduling),
    meetings: createClient(MeetingService, transports.scheduling),
  };
}

/** Call options carrying a context signed now; signed per call, since a signature ages out. */
export type ContextSigner = (ctx: RequestContext) => CallOptions;

/**
 * The spec's org context header travels too, for proxies and logs on the way; services
 * trust only the signed context, which carries the same org id.
 */
export const ORG_ID_HEADER = "x-platform-org-id";

export function contextSigner(secret: string, clock: Clock): ContextSigner {
  return (ctx) => ({
    headers: {
      [CONTEXT_HEADER]: signContext(ctx, secret, clock),
      ...(ctx.orgId ? { [ORG_ID_HEADER]: ctx.orgId } : {}),
    },
  });
}

/**
 * Calls `onReplay` when the service answered a write from its idempotency record, so every
 * route passes the replay on without knowing about it. The replayed body is the original
 * one, and each route answers with its one success status, so the status matches too.
 */
export function forwardReplay(options: CallOptions, onReplay: () => void): CallOptions {
  return {
    ...options,
    onHeader(headers) {
      if (headers.get(IDEMPOTENT_REPLAY_HEADER) === "true") onReplay();
    },
  };
}
