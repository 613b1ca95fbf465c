import type { operations } from "./generated/openapi.js";
import type { OPERATIONS } from "./generated/operations.js";
import type { PageOf, PageRequest } from "./pagination.js";
import type { RetryOptions } from "./retry.js";

// Types of each operation, derived from the generated OpenAPI types by operationId.

/** Every REST operation of the API, by its OpenAPI operationId. */
export type OperationId = keyof typeof OPERATIONS;
type Table = typeof OPERATIONS;
type Op<K extends OperationId> = operations[K];

/** A member of an object type without `undefined`, or never when absent. */
type Member<T, F extends PropertyKey> = F extends keyof T ? Exclude<T[F], undefined> : never;
type Or<T, Fallback> = [T] extends [never] ? Fallback : T;

/** Path parameters of an operation, e.g. `{ dealId: string }` (never when it has none). */
export type PathParamsOf<K extends OperationId> = Member<Op<K>["parameters"], "path">;
/** Query parameters of an operation (never when it has none). */
export type QueryOf<K extends OperationId> = Member<Op<K>["parameters"], "query">;
/** The JSON body of an operation (never when it takes none). */
export type BodyOf<K extends OperationId> = [Member<Op<K>, "requestBody">] extends [never]
  ? never
  : Member<Op<K>, "requestBody"> extends { content: { "application/json": infer B } }
    ? B
    : never;

type SuccessStatus = 200 | 201 | 202 | 204;
type Responses<K extends OperationId> = Op<K>["responses"];
type ContentOf<R> = R extends { content: { "application/json": infer B } } ? B : undefined;
/** What a successful call returns: the JSON body of its 2xx answer (undefined for a 204). */
export type ResponseOf<K extends OperationId> = ContentOf<Responses<K>[Extract<keyof Responses<K>, SuccessStatus>]>;

/** The list operations: a `cursor` parameter and a `{items, nextCursor}` page. */
export type PaginatedOperationId = {
  [K in OperationId]: Table[K] extends { paginated: true } ? K : never;
}[OperationId];
/** The item type of a list operation. */
export type ItemOf<K extends PaginatedOperationId> = ResponseOf<K> extends PageOf<infer I> ? I : never;

/** Path and query parameters of an operation, in one object (their names never overlap). */
export type InputOf<K extends OperationId> = Or<PathParamsOf<K>, unknown> & Or<QueryOf<K>, unknown>;

/** Options of one call, on top of the client's. */
export interface CallOptions {
  /**
   * The Idempotency-Key of this logical call, on operations that require one; the client
   * generates one per call otherwise. Every retry of the call sends the same key.
   */
  idempotencyKey?: string;
  /** Act on this child organization for this call (X-Platform-Acting-On). */
  actingOn?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Cancels the call, retries and waits included. */
  signal?: AbortSignal;
  /** This call's retry policy, merged over the client's; false: one attempt only. */
  retry?: Partial<RetryOptions> | false;
  /** Deadline of each attempt in milliseconds. */
  timeoutMs?: number;
}

/** `ifMatch` is required exactly where the operation requires If-Match. */
type IfMatchOf<K extends OperationId> = Table[K] extends { ifMatch: true }
  ? {
      /** The ETag `W/"<version>"` from the last read, or the resource's `version` number. */
      ifMatch: string | number;
    }
  : { ifMatch?: never };

/** Options of a call of operation K. */
export type OptionsOf<K extends OperationId> = CallOptions & IfMatchOf<K>;

type OptionsArg<K extends OperationId, Extra = unknown> = Table[K] extends { ifMatch: true }
  ? [options: OptionsOf<K> & Extra]
  : [options?: OptionsOf<K> & Extra];
type HasPath<K extends OperationId> = [PathParamsOf<K>] extends [never] ? false : true;
type HasQuery<K extends OperationId> = [QueryOf<K>] extends [never] ? false : true;
/** No input at all where the operation has no path or query parameters: only options follow. */
type InputArg<K extends OperationId> =
  HasPath<K> extends false
    ? HasQuery<K> extends false
      ? []
      : object extends InputOf<K>
        ? [input?: InputOf<K>]
        : [input: InputOf<K>]
    : [input: InputOf<K>];

/**
 * The arguments of a call of operation K:
 * - without a body: `(input?, options?)`, input holding the path and query parameters;
 * - without a body, path or query parameters: `(options?)` only;
 * - with a body and path parameters: `(input, body, options?)`; `(input, body?, options?)` when
 *   the body is optional (requestBody.required false, e.g. webhookSubscriptions.test);
 * - with a body and no path parameters: `(body, options?)`, query parameters in `options.query`.
 * `options` is required where If-Match is.
 */
export type ArgsOf<K extends OperationId> = [BodyOf<K>] extends [never]
  ? [...InputArg<K>, ...OptionsArg<K>]
  : HasPath<K> extends true
    ? undefined extends Op<K>["requestBody"]
      ? [input: InputOf<K>, body?: BodyOf<K>, ...OptionsArg<K>]
      : [input: InputOf<K>, body: BodyOf<K>, ...OptionsArg<K>]
    : [body: BodyOf<K>, ...OptionsArg<K, QueryOption<K>>];

type QueryOption<K extends OperationId> = [QueryOf<K>] extends [never] ? unknown : { query?: QueryOf<K> };

/** What calling operation K returns: a PageRequest for a list, else a promise of the body. */
export type ResultOf<K extends OperationId> = K extends PaginatedOperationId
  ? PageRequest<ItemOf<K>, ResponseOf<K> & PageOf<ItemOf<K>>>
  : Promise<ResponseOf<K>>;

/** One typed method per operation. */
export type OperationMethod<K extends OperationId> = (...args: ArgsOf<K>) => ResultOf<K>;

// The generic `client.request(method, path, init)`: paths as the spec writes them.

export type HttpMethod = Table[OperationId]["method"];
/** The paths (below /api/v1alpha1, with `{param}` placeholders) that serve method M. */
export type PathFor<M extends HttpMethod> = {
  [K in OperationId]: Table[K] extends { method: M } ? Table[K]["path"] : never;
}[OperationId];
/** The operation behind method M and path P. */
export type OperationFor<M extends HttpMethod, P extends string> = {
  [K in OperationId]: Table[K] extends { method: M; path: P } ? K : never;
}[OperationId];

type Needed<T, Key extends string> = [T] extends [never]
  ? { [_ in Key]?: never }
  : object extends T
    ? { [_ in Key]?: T }
    : { [_ in Key]: T };

/** `init` of a generic request: `params` (path), `query` and `body`, each required where the operation requires it. */
export type RequestOptions<K extends OperationId> = Needed<PathParamsOf<K>, "params"> &
  Needed<QueryOf<K>, "query"> &
  Needed<BodyOf<K>, "body"> &
  OptionsOf<K>;

/** A successful answer with what came with it. */
export interface ApiResponse<T> {
  data: T;
  status: number;
  headers: Headers;
  /** X-Request-Id of the answer. */
  requestId: string | undefined;
  /** True when the platform answered from an earlier request with the same Idempotency-Key. */
  replayed: boolean;
  /** Requests the call made, retries included. */
  attempts: number;
}
