import type http from "node:http";
import type http2 from "node:http2";
import { create, type DescMethod, type DescService, fromBinary, isMessage } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes, parseTimeout } from "@connectrpc/connect/protocol-connect";
import { CallHeaders } from "./call-headers.js";
import { SIGNAL_FIRED, type SignalHolder } from "./deadline.js";
import { encodeResponse } from "./reusable-response.js";

type Req = http2.Http2ServerRequest | http.IncomingMessage;
type Res = http2.Http2ServerResponse | http.ServerResponse;
/** A Node request handler for both HTTP/2 (compatibility API) and HTTP/1.1. */
export type NodeHandler = (req: Req, res: Res) => void;
type Impl = (input: unknown, ctx: HandlerContext) => unknown;

interface UnaryMethod {
  method: DescMethod & { methodKind: "unary" };
  impl: Impl;
  run: (req: UnaryRequest) => Promise<UnaryResponse>;
}

/**
 * Serves unary Connect calls in the binary format (what every client of this project sends)
 * without Connect-ES's universal handler; everything else (streaming, JSON, GET, compressed
 * bodies) goes to `fallback`, Connect-ES's own Node adapter over the same routes.
 *
 * Why: measured on this project's 2-core VM, Connect-ES's adapter costs ~200–250 µs of CPU per
 * unary call against ~35 µs for the same answer written through the same `node:http2`
 * compatibility API (docs/benchmarks/gateway.md, "A lean unary RPC path"): a one-message body goes through
 * async-iterable pipes, and every call makes a deadline signal, a linked AbortController and,
 * when it ends, an abort (a `DOMException`). Here the call's AbortSignal is made only when a
 * handler or interceptor reads it.
 *
 * The wire format, status codes, headers, trailers and error JSON are Connect-ES's
 * (`@connectrpc/connect/protocol-connect`), and so are the interceptor and handler contracts:
 * interceptors see the same request and response objects, handlers the same context.
 */
export function unaryHandler(opts: {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  fallback: (routes: (router: ConnectRouter) => void) => NodeHandler;
}): NodeHandler {
  const methods = new Map<string, UnaryMethod>();
  const record = (router: ConnectRouter): ConnectRouter => {
    const recorder: ConnectRouter = {
      get handlers() {
        return router.handlers;
      },
      service(service: DescService, implementation: Record<string, unknown>, options?: never) {
        for (const method of service.methods) {
          const fn = implementation[method.localName];
          if (method.methodKind !== "unary" || typeof fn !== "function") continue;
          const impl = fn.bind(implementation) as Impl;
          methods.set(`/${service.typeName}/${method.name}`, {
            method: method as UnaryMethod["method"],
            impl,
            run: chain(opts.interceptors, method as UnaryMethod["method"], impl),
          });
        }
        router.service(service, implementation as never, options);
        return recorder;
      },
      rpc(method: DescMethod, impl: unknown, options?: never) {
        router.rpc(method as never, impl as never, options);
        return recorder;
      },
    } as ConnectRouter;
    return recorder;
  };
  const fallback = opts.fallback((router) => opts.routes(record(router)));

  return (req, res) => {
    const entry = req.method === "POST" ? methods.get(req.url ?? "") : undefined;
    const headers = req.headers;
    if (
      entry === undefined ||
      headers["content-type"] !== "application/proto" ||
      (headers["content-encoding"] !== undefined && headers["content-encoding"] !== "identity")
    ) {
      fallback(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      // handle() answers every failure of the call itself; what is left (the stream gone
      // while the answer is written) ends the stream, never the process.
      handle(entry, req, res, body).catch((err: unknown) => {
        const cause = err instanceof Error ? err : undefined;
        if (res.destroyed) return;
        if ("stream" in res) res.stream.destroy(cause);
        else res.destroy(cause);
      });
    });
  };
}

/** Connect-ES's applyInterceptors around the implementation, as its invokeUnaryImplementation does. */
function chain(
  interceptors: Interceptor[],
  method: UnaryMethod["method"],
  impl: Impl,
): (req: UnaryRequest) => Promise<UnaryResponse> {
  const invoke = async (req: UnaryRequest): Promise<UnaryResponse> => {
    const ctx = (req as CallRequest)[CONTEXT];
    const output = await impl(req.message, handlerContext(ctx, req));
    return {
      stream: false,
      service: method.parent,
      method,
      header: ctx.responseHeader,
      trailer: ctx.responseTrailer,
      message: isMessage(output, method.output) ? output : create(method.output, output as never),
    } as UnaryResponse;
  };
  return interceptors.reduceRight((next, interceptor) => interceptor(next as never) as typeof next, invoke);
}

/**
 * The context the implementation sees: the call's, with what an interceptor may have put in
 * its place on the request (Connect-ES's mergeRequest).
 */
function handlerContext(ctx: CallContext, req: UnaryRequest): HandlerContext & SignalHolder {
  if (req.header === ctx.requestHeader && req.contextValues === ctx.values && req.service === ctx.service) return ctx;
  return withSignal({
    method: ctx.method,
    service: req.service,
    requestMethod: ctx.requestMethod,
    protocolName: ctx.protocolName,
    url: ctx.url,
    [SIGNAL_FIRED]: ctx[SIGNAL_FIRED],
    [CONTEXT]: ctx,
    timeoutMs: ctx.timeoutMs,
    requestHeader: req.header,
    responseHeader: ctx.responseHeader,
    responseTrailer: ctx.responseTrailer,
    values: req.contextValues,
  } as Omit<HandlerContext, "signal"> & { [CONTEXT]: CallContext });
}

const CONTEXT = Symbol("handler context");
type CallRequest = UnaryRequest & { [CONTEXT]: CallContext };

/**
 * `signal` of a call's request and handler context, read through the call's context: one
 * accessor shared by every call, never a getter written in the object literal. A literal's
 * getter is a new closure on every call, and an object given an accessor no other object has
 * gets a hidden class (a V8 map) of its own. Maps live in the old generation, so each call's
 * map kept its getter, and through it the call's stream, request and response, alive through
 * every scavenge until a mark-compact: a scratch server of this path promoted 18.7 % of what
 * it allocated, and 2.4 % with this accessor (docs/benchmarks/rpc.md, "A getter per call").
 */
const SIGNAL_ACCESSOR: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: { [CONTEXT]: CallContext }): AbortSignal {
    return this[CONTEXT].signal;
  },
};

function withSignal<T extends { [CONTEXT]: CallContext }>(target: T): T & { readonly signal: AbortSignal } {
  return Object.defineProperty(target, "signal", SIGNAL_ACCESSOR) as T & { readonly signal: AbortSignal };
}

async function handle(entry: UnaryMethod, req: Req, res: Res, body: Buffer): Promise<void> {
  const timeout = parseTimeout(header(req, "connect-timeout-ms"), Number.MAX_SAFE_INTEGER);
  const ctx = new CallContext(entry.method, req, res, timeout.timeoutMs);
  let status = 200;
  let out: Uint8Array;
  let failure: ConnectError | undefined;
  try {
    if (timeout.error) throw timeout.error;
    let input: unknown;
    try {
      input = fromBinary(entry.method.input, body);
    } catch (e) {
      throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.InvalidArgument);
    }
    const request = withSignal({
      stream: false as const,
      service: entry.method.parent,
      method: entry.method,
      requestMethod: "POST",
      url: ctx.url,
      header: ctx.requestHeader,
      contextValues: ctx.values,
      message: input,
      [SIGNAL_FIRED]: ctx[SIGNAL_FIRED],
      [CONTEXT]: ctx,
    }) as CallRequest;
    const response = await entry.run(request);
    copyHeaders(response.header, ctx.responseHeader);
    copyHeaders(response.trailer, ctx.responseTrailer);
    out = encodeResponse(entry.method.output, response.message);
  } catch (e) {
    failure =
      e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
    status = codeToHttpStatus(failure.code);
    ctx.responseHeader.set("content-type", "application/json");
    for (const [key, value] of failure.metadata) ctx.responseHeader.set(key, value);
    out = errorToJsonBytes(failure, {});
  }
  ctx.end(failure);
  if (gone(res)) return;
  // Trailers of a unary Connect response travel as headers prefixed "trailer-" (Connect-ES's trailerMux).
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of ctx.responseHeader) headers[name] = value;
  for (const [name, value] of ctx.responseTrailer) headers[`trailer-${name}`] = value;
  headers["content-length"] = String(out.byteLength);
  res.writeHead(status, headers);
  res.end(out);
}

/** Whether the caller can no longer get the answer: its stream (HTTP/2) or connection (HTTP/1.1) closed. */
function gone(res: Res): boolean {
  if (res.destroyed) return true;
  return "stream" in res ? res.stream.closed : res.socket === null || res.socket.destroyed;
}

function header(req: Req, name: string): string | null {
  const value = req.headers[name];
  return typeof value === "string" ? value : null;
}

function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  for (const [key, value] of from) to.set(key, value);
}

/**
 * The HandlerContext of one call. Its AbortSignal (aborted at the deadline, or when the
 * caller resets the stream) exists only once something reads it.
 */
class CallContext {
  readonly service: DescService;
  readonly requestMethod = "POST";
  readonly protocolName = "connect";
  readonly url: string;
  readonly requestHeader: Headers;
  readonly responseHeader: Headers = new CallHeaders({ "content-type": "application/proto" });
  readonly responseTrailer: Headers = new CallHeaders();
  readonly values = createContextValues();
  private readonly deadlineAt: number | undefined;
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  private onClose: (() => void) | undefined;
  private ended = false;

  constructor(
    readonly method: DescMethod,
    req: Req,
    private readonly res: Res,
    timeoutMs: number | undefined,
  ) {
    this.service = method.parent;
    this.url = req.url ?? "";
    this.deadlineAt = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    // CallHeaders, not the Fetch API's Headers: no WebIDL checks of what Node's parser read (call-headers.ts).
    const header = new CallHeaders();
    const raw = req.headers;
    for (const name in raw) {
      if (name.charCodeAt(0) === 58 /* ":" */) continue;
      const value = raw[name];
      if (Array.isArray(value)) for (const v of value) header.append(name, v);
      else if (value !== undefined) header.set(name, value);
    }
    this.requestHeader = header;
  }

  readonly timeoutMs = (): number | undefined =>
    this.deadlineAt === undefined ? undefined : this.deadlineAt - Date.now();

  /**
   * Whether the signal has fired, or would have had it been made: the deadline passed, the
   * caller went away, or the call ended. The checks before every query ask this, not `signal`.
   */
  readonly [SIGNAL_FIRED] = (): boolean => {
    if (this.controller) return this.controller.signal.aborted;
    return this.ended || (this.deadlineAt !== undefined && Date.now() >= this.deadlineAt) || gone(this.res);
  };

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const controller = new AbortController();
    this.controller = controller;
    if (this.ended) {
      controller.abort(new ConnectError("the call ended", Code.Canceled));
      return controller.signal;
    }
    if (this.deadlineAt !== undefined) {
      const left = this.deadlineAt - Date.now();
      const expire = () => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
      if (left <= 0) expire();
      else this.timer = setTimeout(expire, left);
    }
    this.onClose = () => {
      if (!this.ended) controller.abort(new ConnectError("the caller went away", Code.Canceled));
    };
    this.res.once("close", this.onClose);
    return controller.signal;
  }

  /** The call is over: an error aborts the signal (as Connect-ES does); success leaves it be. */
  end(error: ConnectError | undefined): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.onClose) this.res.off("close", this.onClose);
    if (error && this.controller && !this.controller.signal.aborted) this.controller.abort(error);
  }
}
