import type { DescService } from "@bufbuild/protobuf";
import { type CallOptions, type Client, createClient, type Transport } from "@connectrpc/connect";
import { BuyerSignalsService, EmailBlastService } from "@platform/contracts/analytics";
import { AccountService, ContactService, TranscriptService } from "@platform/contracts/crm";
import { GatewayAuthService, OrganizationService, PartnerService, UserService } from "@platform/contracts/identity";
import { RequestLogService } from "@platform/contracts/request-logs";
import { DealService, InsightService, QnaService } from "@platform/contracts/revenue";
import { MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import { EventLogService, WebhookSubscriptionService } from "@platform/contracts/webhooks";
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
  requestLogs: Transport;
}

/**
 * The Connect services of each bounded context, by context and then by the name routes use
 * (`clients.revenue.deals`). The one place a gateway client is made: routes, auth, delegation
 * and health all take theirs from here.
 */
const SERVICES = {
  identity: {
    gatewayAuth: GatewayAuthService,
    organizations: OrganizationService,
    users: UserService,
    partners: PartnerService,
  },
  scheduling: { smartSchedules: SmartScheduleService, meetings: MeetingService },
  crm: { accounts: AccountService, contacts: ContactService, transcripts: TranscriptService },
  revenue: { deals: DealService, qnas: QnaService, insights: InsightService },
  analytics: { signals: BuyerSignalsService, blasts: EmailBlastService },
  webhooks: { subscriptions: WebhookSubscriptionService, events: EventLogService },
  requestLogs: { requestLogs: RequestLogService },
} as const satisfies Record<keyof ServiceTransports, Record<string, DescService>>;

type Services = typeof SERVICES;

/** Connect clients of the services behind the gateway, grouped per context. */
export type ServiceClients = {
  [C in keyof Services]: { [S in keyof Services[C]]: Client<Services[C][S] & DescService> };
};

export function createServiceClients(transports: ServiceTransports): ServiceClients {
  const clients: Record<string, Record<string, unknown>> = {};
  for (const [context, services] of Object.entries(SERVICES)) {
    const transport = transports[context as keyof ServiceTransports];
    clients[context] = Object.fromEntries(
      Object.entries(services).map(([name, service]) => [name, createClient(service, transport)]),
    );
  }
  return clients as ServiceClients;
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
