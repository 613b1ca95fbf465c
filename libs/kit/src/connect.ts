import { create } from "@bufbuild/protobuf";
import {
  type CallOptions,
  Code,
  ConnectError,
  type ConnectRouter,
  createContextKey,
  createRouterTransport,
  type HandlerContext,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { ProblemSchema } from "@platform/contracts/common";
import type { Clock } from "./clock.js";
import { CONTEXT_HEADER, type RequestContext, signContext, verifyContext } from "./context.js";
import { isDatabaseUnavailable, isStatementTimeout } from "./db.js";
import { deadlineExceeded, deadlineInterceptor, inheritDeadline } from "./deadline.js";
import { HEALTH_SERVICE } from "./health.js";
import type { Logger } from "./logger.js";
import { isProblemName, ProblemError, problem } from "./problems.js";
import { quietLog } from "./quiet-log.js";
import { rpcListener } from "./rpc-listener.js";
import { clientTelemetryInterceptor, serverTelemetryInterceptor } from "./rpc-telemetry.js";
import { listenShared } from "./shared-port.js";
import { unaryHandler } from "./unary-handler.js";
import { unaryTransport } from "./unary-transport.js";

export type Routes = (router: ConnectRouter) => void;

/** The verified request context, set by `trustInterceptor` for the handlers. */
export const requestContextKey = createContextKey<RequestContext | undefined>(undefined, {
  description: "verified platform request context",
});

/** The verified context of an RPC; handlers behind `trustInterceptor` always have one. */
export function requestContext(ctx: HandlerContext): RequestContext {
  const value = ctx.values.get(requestContextKey);
  if (!value) throw problem("missing-trust-header");
  return value;
}

/** The context of an integrator request: org, token and scopes are always present. */
export function apiContext(
  ctx: HandlerContext,
): Required<Pick<RequestContext, "orgId" | "tokenId" | "scopes">> & RequestContext {
  const value = requestContext(ctx);
  if (value.principal !== "api" || !value.orgId || !value.tokenId || !value.scopes) {
    throw problem("missing-trust-header", "This RPC serves integrator requests only.");
  }
  return value as Required<Pick<RequestContext, "orgId" | "tokenId" | "scopes">> & RequestContext;
}

/** The Connect code each problem status travels as; any other status is an internal error. */
const CODE_FOR_STATUS: Readonly<Record<number, Code>> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  409: Code.AlreadyExists,
  410: Code.FailedPrecondition,
  412: Code.FailedPrecondition,
  422: Code.FailedPrecondition,
  429: Code.ResourceExhausted,
  501: Code.Unimplemented,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
};

function codeForStatus(status: number): Code {
  return CODE_FOR_STATUS[status] ?? Code.Internal;
}

/** A problem as a Connect error; the typed problem rides along as an error detail. */
export function problemToConnectError(p: ProblemError): ConnectError {
  return new ConnectError(p.detail, codeForStatus(p.status), undefined, [
    {
      desc: ProblemSchema,
      value: create(ProblemSchema, {
        name: p.problemName,
        status: p.status,
        detail: p.detail,
        extensions: JSON.parse(JSON.stringify(p.extensions)),
      }),
    },
  ]);
}

/**
 * Turns whatever an RPC call threw back into a problem: the detail a service attached, a
 * 503 when the service cannot be reached, else an internal error (never the raw message).
 */
export function problemFromError(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  const ce = ConnectError.from(err);
  const [detail] = ce.findDetails(ProblemSchema);
  if (detail && isProblemName(detail.name)) {
    return new ProblemError(detail.name, detail.detail, (detail.extensions ?? {}) as Record<string, unknown>);
  }
  if (ce.code === Code.Unimplemented) {
    return problem("not-implemented", "This operation is not available yet.");
  }
  if (ce.code === Code.Unavailable) {
    return problem("service-unavailable", "A backing service is unavailable; retry with backoff.");
  }
  // Canceled: the call was given up because the request it serves ran out of time.
  if (ce.code === Code.DeadlineExceeded || ce.code === Code.Canceled) {
    return problem("upstream-timeout", UPSTREAM_TIMEOUT_DETAIL);
  }
  return problem("internal", "Internal error.");
}

export const UPSTREAM_TIMEOUT_DETAIL =
  "A backing service did not answer within the deadline; retry with backoff (a write with the same Idempotency-Key is applied at most once).";

/**
 * Server side: problems become Connect errors; a lost database connection is a retryable
 * 503; anything unexpected is logged and hidden.
 */
export function errorInterceptor(logger: Logger): Interceptor {
  const quiet = quietLog(logger);
  return (next) => async (req) => {
    try {
      const res = await next(req);
      quiet.recovered("rpc.database", "database reachable again");
      return res;
    } catch (err) {
      if (err instanceof ProblemError) throw problemToConnectError(err);
      if (err instanceof ConnectError) throw err;
      // The transaction's statement_timeout (what was left of the call's deadline) cut a query.
      if (isStatementTimeout(err)) throw deadlineExceeded();
      if (isDatabaseUnavailable(err)) {
        quiet.failure("rpc.database", err, "RPC failed: the database is unreachable or the connection was lost");
        throw problemToConnectError(
          problem("service-unavailable", "The service lost its database connection; retry with backoff."),
        );
      }
      logger.error({ err, procedure: req.url }, "unhandled error in RPC");
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}

/** Server side: every RPC must carry a context signed by the gateway. */
export function trustInterceptor(secret: string, clock: Clock): Interceptor {
  return (next) => async (req) => {
    // Health checks come from kubelet and load balancers, which carry no request context.
    if (req.service.typeName === HEALTH_SERVICE) return next(req);
    req.contextValues.set(requestContextKey, verifyContext(req.header.get(CONTEXT_HEADER), secret, clock));
    return next(req);
  };
}

/** Server side: the admin plane answers only to the admin secret. */
export function adminSecretInterceptor(secret: string): Interceptor {
  const expected = `Bearer ${secret}`;
  return (next) => async (req) => {
    if (req.header.get("authorization") !== expected) {
      throw new ConnectError("admin secret required", Code.Unauthenticated);
    }
    return next(req);
  };
}

/** Client side: signs the context of the current call into its headers. */
export function signingInterceptor(secret: string, clock: Clock, current: () => RequestContext): Interceptor {
  return (next) => async (req) => {
    req.header.set(CONTEXT_HEADER, signContext(current(), secret, clock));
    return next(req);
  };
}

/**
 * Call options for a service-to-service call on behalf of `ctx` (the caller's own signed
 * context, signed again now), so the callee answers for the caller's org only. Its deadline
 * is what remains of the RPC being served, capped by `maxTimeoutMs` or else the transport's
 * (`inheritDeadline`).
 */
export function onBehalfOf(ctx: RequestContext, secret: string, clock: Clock, maxTimeoutMs?: number): CallOptions {
  return {
    headers: { [CONTEXT_HEADER]: signContext(ctx, secret, clock) },
    ...(maxTimeoutMs !== undefined ? { timeoutMs: maxTimeoutMs } : {}),
  };
}

/** Client side: sends the admin secret. */
export function adminClientInterceptor(secret: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${secret}`);
    return next(req);
  };
}

/**
 * Deadline of a call that sets none of its own (services: SERVICE_RPC_TIMEOUT_MS). Below the
 * signed context's 60 s lifetime, so a call can never outlive the context it carries.
 */
export const DEFAULT_RPC_TIMEOUT_MS = 10_000;

/**
 * Connect to a service, cleartext inside the cluster: unary calls over HTTP/1.1 keep-alive
 * through the lean path of `unary-transport.ts`, streaming calls over HTTP/2 through Connect-ES's
 * transport (kit's server takes both on one port, `rpc-listener.ts`). Why HTTP/1.1 for unary
 * calls: on this project's 2-core VM the callee spent a third less CPU per call, and the
 * gateway's tail was shorter (docs/benchmarks/rpc.md, "Unary calls over HTTP/1.1"); and a pool of
 * connections spreads calls over a Kubernetes Service's pods, where one HTTP/2 connection
 * stays on the pod it first reached. Every call has a deadline
 * (`timeoutMs`, or the call's own `timeoutMs`; made while serving an RPC, at most what remains
 * of that RPC's), sent to the callee in Connect's timeout header so it stops working on a
 * request its caller gave up on. Responses travel
 * uncompressed, as gRPC's do by default: inside the cluster bandwidth is cheap and CPU is
 * not; gzip of a 1 MB availability answer (slot tokens are random and barely compress) cost
 * the service 30 ms and the gateway 6 ms of CPU per request.
 */
export function httpTransport(
  baseUrl: string,
  interceptors: Interceptor[] = [],
  options: {
    timeoutMs?: number;
    /** HTTP/2 for unary calls too: for a server that speaks only HTTP/2, such as Connect-ES's alone. */
    unaryHttpVersion?: "1.1" | "2";
  } = {},
): Transport {
  const timeoutMs = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const all = [clientTelemetryInterceptor(), ...interceptors];
  const streaming = createConnectTransport({
    baseUrl,
    httpVersion: "2",
    useBinaryFormat: true,
    acceptCompression: [],
    defaultTimeoutMs: timeoutMs,
    interceptors: all,
  });
  return inheritDeadline(
    unaryTransport({
      baseUrl,
      defaultTimeoutMs: timeoutMs,
      interceptors: all,
      streaming,
      httpVersion: options.unaryHttpVersion,
    }),
    timeoutMs,
  );
}

/** The embedded runtime's transport: the same routes and interceptors, no network. */
export function inProcessTransport(
  routes: Routes,
  serverInterceptors: Interceptor[],
  clientInterceptors: Interceptor[] = [],
): Transport {
  return inheritDeadline(
    createRouterTransport(routes, {
      router: { interceptors: [serverTelemetryInterceptor(), deadlineInterceptor(), ...serverInterceptors] },
      transport: { interceptors: [clientTelemetryInterceptor(), ...clientInterceptors], useBinaryFormat: true },
    }),
  );
}

export interface RunningServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves Connect routes over HTTP/2 cleartext (h2c): binary unary calls through
 * `unary-handler.ts`, the rest through Connect-ES's Node adapter.
 */
export async function serveConnect(opts: {
  routes: Routes;
  interceptors: Interceptor[];
  port: number;
  host?: string;
}): Promise<RunningServer> {
  const interceptors = [serverTelemetryInterceptor(), deadlineInterceptor(), ...opts.interceptors];
  const handler = unaryHandler({
    routes: opts.routes,
    interceptors,
    fallback: (routes) => connectNodeAdapter({ routes, interceptors }),
  });
  const { server, closeConnections } = rpcListener(handler);
  await listenShared(server, opts.port, opts.host ?? "0.0.0.0");
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : opts.port,
    close: () =>
      new Promise<void>((resolve) => {
        closeConnections();
        server.close(() => resolve());
      }),
  };
}
