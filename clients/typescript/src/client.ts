import { DEFAULT_AVAILABILITY_DAYS, narrowAvailability } from "./availability.js";
import { PlatformConnectionError, PlatformError } from "./errors.js";
import { API_PREFIX, OPERATIONS } from "./generated/operations.js";
import { remember } from "./last-response.js";
import { type PageOf, PageRequest } from "./pagination.js";
import { parseProblem } from "./problems.js";
import { RESOURCES, type Resources } from "./resources.js";
import {
  delayAfter,
  isRetriableStatus,
  type RetryOptions,
  sleep as realSleep,
  retryAfterMs,
  retryPolicy,
} from "./retry.js";
import type {
  ApiResponse,
  ArgsOf,
  CallOptions,
  HttpMethod,
  OperationFor,
  OperationId,
  PathFor,
  RequestOptions,
  ResponseOf,
  ResultOf,
} from "./types.js";

/** Kept in step with package.json (a test checks); sent in User-Agent. */
export const CLIENT_VERSION = "0.1.0";

export interface ClientOptions {
  /** The API key (X-Platform-Api-Key), 56 characters. */
  apiKey: string;
  /** Where the API is: scheme, host and port (the /api/v1alpha1 prefix is added). Default http://127.0.0.1:8080, as `npm start` serves it. */
  baseUrl?: string;
  /** Act on this child organization on every call (see `actingOn`). */
  actingOn?: string;
  /** Retry policy of every call; false: one attempt only. See RetryOptions for the defaults. */
  retry?: Partial<RetryOptions> | false;
  /** Deadline of each attempt in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** Headers sent on every call. */
  headers?: Record<string, string>;
  /** The fetch to use; the global one by default (Node ≥ 20). */
  fetch?: typeof fetch;
  /** Makes an Idempotency-Key for a call; a random UUID by default. */
  idempotencyKey?: () => string;
  /** How the client waits between attempts (tests move a clock instead of sleeping). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Random numbers for the backoff jitter, in [0, 1). */
  random?: () => number;
  /**
   * Days of availability `smartSchedules.availability` asks for when the body has no
   * `dateRange` (from now). Default 7; false asks for the schedule's whole booking window, the
   * server's default, which can be thousands of slots in one unpaginated answer.
   */
  availabilityDays?: number | false;
  /** The client's clock, for the default availability window. */
  now?: () => Date;
}

interface Resolved {
  apiKey: string;
  base: string;
  actingOn: string | undefined;
  retry: RetryOptions;
  timeoutMs: number;
  headers: Record<string, string>;
  fetch: typeof fetch;
  idempotencyKey: () => string;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  availabilityDays: number | false;
  now: () => Date;
}

/** One request as the client sends it, before any attempt. */
interface Prepared {
  method: string;
  /** The path as the spec writes it, for messages. */
  template: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** A network failure may be retried: the method is safe or the write carries an Idempotency-Key. */
  replayable: boolean;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

function resolve(options: ClientOptions): Resolved {
  if (!options.apiKey) throw new TypeError("apiKey is required");
  const base = (options.baseUrl ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
  return {
    apiKey: options.apiKey,
    // Accept the base with or without the version prefix.
    base: base.endsWith(API_PREFIX) ? base : base + API_PREFIX,
    actingOn: options.actingOn,
    retry: retryPolicy(options.retry),
    timeoutMs: options.timeoutMs ?? 30_000,
    headers: options.headers ?? {},
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    idempotencyKey: options.idempotencyKey ?? (() => crypto.randomUUID()),
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
    availabilityDays: options.availabilityDays ?? DEFAULT_AVAILABILITY_DAYS,
    now: options.now ?? (() => new Date()),
  };
}

/** `{dealId}` → the value, percent-encoded; a missing value is a programming error. */
function fillPath(template: string, params: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === null || value === "") {
      throw new TypeError(`path parameter ${name} of ${template} is missing`);
    }
    return encodeURIComponent(String(value));
  });
}

/** Repeatable parameters are sent once per value (`stage=Won&stage=Lost`), as the API reads them. */
function queryString(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      search.append(name, one instanceof Date ? one.toISOString() : String(one));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

function splitInput(template: string, input: Record<string, unknown>) {
  const pathNames = new Set([...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!));
  const path: Record<string, unknown> = {};
  const query: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) (pathNames.has(name) ? path : query)[name] = value;
  return { path, query };
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  const type = res.headers.get("content-type") ?? "";
  if (/[/+]json\b/.test(type)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

const isAbort = (err: unknown) => err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError");

/**
 * Gives the client the resource groups (`client.deals`, …) as typed read-only properties; the
 * constructor defines each group from RESOURCES, so the types and the groups come from one table.
 */
const ResourceGroups = class {} as new () => Readonly<Resources>;

/**
 * A typed client of the Platform Integration API. Every operation of the OpenAPI document is
 * callable three ways: grouped by resource (`client.deals.get({ dealId })`), by operationId
 * (`client.call("getDeal", { dealId })`) and by method and path
 * (`client.request("GET", "/deals/{dealId}", { params: { dealId } })`).
 *
 * By default each call retries 429 (after Retry-After), 5xx and network failures with
 * exponential backoff and jitter, and writes that require an Idempotency-Key get one per
 * call, the same on every retry, so a retried write is never applied twice.
 */
export class PlatformClient extends ResourceGroups {
  readonly #options: ClientOptions;
  readonly #config: Resolved;

  constructor(options: ClientOptions) {
    super();
    this.#options = options;
    this.#config = resolve(options);
    for (const [resource, methods] of Object.entries(RESOURCES)) {
      const group: Record<string, unknown> = {};
      for (const [name, operationId] of Object.entries(methods)) {
        group[name] = (...args: unknown[]) => this.call(operationId, ...(args as ArgsOf<typeof operationId>));
      }
      Object.defineProperty(this, resource, { value: Object.freeze(group), enumerable: true });
    }
  }

  /** A client like this one that acts on the child organization `orgId` (X-Platform-Acting-On). */
  actingOn(orgId: string): PlatformClient {
    return new PlatformClient({ ...this.#options, actingOn: orgId });
  }

  /** Calls an operation by its operationId, with the arguments its resource method takes. */
  call<K extends OperationId>(operationId: K, ...args: ArgsOf<K>): ResultOf<K> {
    const spec = OPERATIONS[operationId] as { method: string; path: string; paginated?: true };
    const { input, body, options } = this.#unpack(operationId, args as unknown[]);
    if (spec.paginated) {
      const fetchPage = async (cursor: string | undefined) => {
        const withCursor = cursor === undefined ? input : { ...input, cursor };
        return remember(await this.#send(operationId, withCursor, body, options)) as PageOf<unknown>;
      };
      return new PageRequest(fetchPage) as unknown as ResultOf<K>;
    }
    return this.#send(operationId, input, body, options).then(remember) as ResultOf<K>;
  }

  /**
   * Calls an operation and returns the whole answer: data, status, headers (ETag, RateLimit, …),
   * requestId and whether it was an idempotent replay. A list operation returns one page.
   */
  async send<K extends OperationId>(operationId: K, ...args: ArgsOf<K>): Promise<ApiResponse<ResponseOf<K>>> {
    const { input, body, options } = this.#unpack(operationId, args as unknown[]);
    return (await this.#send(operationId, input, body, options)) as ApiResponse<ResponseOf<K>>;
  }

  /**
   * Calls any operation by method and path as the spec writes them (below /api/v1alpha1), e.g.
   * `request("PATCH", "/deals/{dealId}", { params: { dealId }, body: { stage: "Won" } })`.
   */
  async request<M extends HttpMethod, P extends PathFor<M>>(
    method: M,
    path: P,
    init: RequestOptions<OperationFor<M, P>>,
  ): Promise<ResponseOf<OperationFor<M, P>>> {
    const operationId = (Object.keys(OPERATIONS) as OperationId[]).find(
      (id) => OPERATIONS[id].method === method && OPERATIONS[id].path === path,
    );
    if (!operationId) throw new TypeError(`${method} ${path} is not an operation of the API`);
    const { params, query, body, ...options } = init as RequestOptions<OperationId> & {
      params?: Record<string, unknown>;
      query?: Record<string, unknown>;
      body?: unknown;
    };
    const response = await this.#send(operationId, { ...query, ...params }, body, options);
    return remember(response) as ResponseOf<OperationFor<M, P>>;
  }

  /** Arguments of `call` → input (path and query), body and options, by the operation's shape. */
  #unpack(operationId: OperationId, args: unknown[]) {
    const template = OPERATIONS[operationId].path;
    const hasPath = template.includes("{");
    const hasBody = (OPERATIONS[operationId] as { body?: true }).body === true;
    type Options = CallOptions & { ifMatch?: string | number; query?: Record<string, unknown> };
    if (hasBody && !hasPath) {
      // (body, options?): a body-only operation's query parameters travel in options.query.
      const [body, options = {}] = args as [unknown, Options?];
      const { query, ...rest } = options;
      return { input: { ...query }, body, options: rest };
    }
    if (hasBody) {
      const [input = {}, body, options = {}] = args as [Record<string, unknown>?, unknown?, Options?];
      return { input, body, options };
    }
    const hasQuery = (OPERATIONS[operationId] as { query?: true }).query === true;
    if (!hasPath && !hasQuery && args.length < 2) {
      // (options?): nothing of it may end up in the query (`me({ signal })` must not send ?signal=).
      const [options = {}] = args as [Options?];
      return { input: {}, body: undefined, options };
    }
    const [input = {}, options = {}] = args as [Record<string, unknown>?, Options?];
    return { input: hasPath || hasQuery ? input : {}, body: undefined, options };
  }

  #prepare(
    operationId: OperationId,
    input: Record<string, unknown>,
    body: unknown,
    options: CallOptions & { ifMatch?: string | number },
  ): Prepared {
    const spec = OPERATIONS[operationId] as { method: string; path: string; idempotencyKey?: true; ifMatch?: true };
    const { path, query } = splitInput(spec.path, input);
    const c = this.#config;
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": `platform-client-typescript/${CLIENT_VERSION}`,
      ...c.headers,
      "x-platform-api-key": c.apiKey,
    };
    const actingOn = options.actingOn ?? c.actingOn;
    if (actingOn) headers["x-platform-acting-on"] = actingOn;
    // One key per logical call, made here once: every retry of the call sends it again.
    const key = options.idempotencyKey ?? (spec.idempotencyKey ? c.idempotencyKey() : undefined);
    if (key !== undefined) headers["idempotency-key"] = key;
    if (options.ifMatch !== undefined) {
      headers["if-match"] = typeof options.ifMatch === "number" ? `W/"${options.ifMatch}"` : options.ifMatch;
    }
    if (operationId === "getAvailability") body = narrowAvailability(body, c.availabilityDays, c.now());
    if (body !== undefined) headers["content-type"] = "application/json";
    Object.assign(headers, options.headers);
    return {
      method: spec.method,
      template: spec.path,
      url: c.base + fillPath(spec.path, path) + queryString(query),
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      replayable: SAFE_METHODS.has(spec.method) || key !== undefined,
    };
  }

  async #send(
    operationId: OperationId,
    input: Record<string, unknown>,
    body: unknown,
    options: CallOptions & { ifMatch?: string | number },
  ): Promise<ApiResponse<unknown>> {
    const request = this.#prepare(operationId, input, body, options);
    const c = this.#config;
    const policy = retryPolicy(options.retry, c.retry);
    const timeoutMs = options.timeoutMs ?? c.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      const retriesLeft = attempt <= policy.maxRetries;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let res: Response;
      let payload: unknown;
      try {
        res = await c.fetch(request.url, {
          method: request.method,
          headers: request.headers,
          ...(request.body !== undefined ? { body: request.body } : {}),
          signal,
        });
        // Read under the same deadline: a body cut off midway is a failed attempt like any other.
        payload = res.status === 204 ? undefined : await readBody(res);
      } catch (err) {
        // The caller's own abort ends the call; a timeout or a network failure may be retried.
        if (options.signal?.aborted) throw options.signal.reason ?? err;
        if (retriesLeft && request.replayable) {
          await c.sleep(delayAfter(attempt - 1, undefined, policy, c.random), options.signal);
          continue;
        }
        const why = isAbort(err) ? `timed out after ${timeoutMs} ms` : `failed: ${(err as Error).message}`;
        throw new PlatformConnectionError(`${request.method} ${request.template} ${why}`, {
          cause: err,
          attempts: attempt,
        });
      }
      const requestId = res.headers.get("x-request-id") ?? undefined;
      if (res.ok) {
        return {
          data: payload,
          status: res.status,
          headers: res.headers,
          requestId,
          replayed: res.headers.get("x-idempotent-replay") === "true",
          attempts: attempt,
        };
      }
      if (retriesLeft && isRetriableStatus(res.status, policy)) {
        const after = retryAfterMs(res.headers.get("retry-after"));
        if (after === undefined || after <= policy.maxRetryAfterMs) {
          await c.sleep(delayAfter(attempt - 1, after, policy, c.random), options.signal);
          continue;
        }
      }
      const problem = parseProblem(payload);
      throw new PlatformError({
        status: res.status,
        problem,
        requestId: requestId ?? problem?.requestId,
        body: payload,
        headers: res.headers,
        attempts: attempt,
        method: request.method,
        path: request.template,
      });
    }
  }
}
