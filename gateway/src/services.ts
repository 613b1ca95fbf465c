import { type CallOptions, type Client, createClient, type Transport } from "@connectrpc/connect";
import { GatewayAuthService, OrganizationService } from "@platform/contracts/identity";
import type { Clock } from "@platform/kit/clock";
import { CONTEXT_HEADER, type RequestContext, signContext } from "@platform/kit/context";

/** How the gateway reaches each bounded context. */
export interface ServiceTransports {
  identity: Transport;
}

/** Connect clients of the services behind the gateway. */
export interface ServiceClients {
  gatewayAuth: Client<typeof GatewayAuthService>;
  organizations: Client<typeof OrganizationService>;
}

export function createServiceClients(transports: ServiceTransports): ServiceClients {
  return {
    gatewayAuth: createClient(GatewayAuthService, transports.identity),
    organizations: createClient(OrganizationService, transports.identity),
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
