import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckRequest,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "@platform/contracts/health";

/** Full name of the gRPC health service; the trust interceptor lets it through unsigned (kubelet probes call it). */
export const HEALTH_SERVICE = Health.typeName;

export interface HealthOptions {
  /** The service's own name, answered besides "" (the whole server). */
  name: string;
  /** True while the process can serve: its database answers and it is not draining. */
  serving: () => Promise<boolean>;
  /** How often Watch re-checks; 5 s by default. */
  watchIntervalMs?: number;
}

const response = (status: ServingStatus): HealthCheckResponse => create(HealthCheckResponseSchema, { status });

async function statusOf(opts: HealthOptions): Promise<ServingStatus> {
  try {
    return (await opts.serving()) ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  } catch {
    return ServingStatus.NOT_SERVING;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * The standard gRPC health protocol (grpc.health.v1.Health), so kubelet's gRPC probes and
 * grpc-health-probe check a service without knowing its API. Served over gRPC as well as
 * Connect, like every route of the service.
 */
export function healthRoutes(opts: HealthOptions): (router: ConnectRouter) => void {
  const known = (service: string) => service === "" || service === opts.name;
  return (router) =>
    router.service(Health, {
      async check(req: HealthCheckRequest) {
        // As the protocol says: an unknown service name is NOT_FOUND, not a status.
        if (!known(req.service)) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
        return response(await statusOf(opts));
      },
      async *watch(req: HealthCheckRequest, ctx: HandlerContext) {
        if (!known(req.service)) {
          yield response(ServingStatus.SERVICE_UNKNOWN);
          return;
        }
        let last: ServingStatus | undefined;
        while (!ctx.signal.aborted) {
          const status = await statusOf(opts);
          if (status !== last) yield response(status);
          last = status;
          await sleep(opts.watchIntervalMs ?? 5_000, ctx.signal);
        }
      },
    });
}
