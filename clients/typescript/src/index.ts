export { DEFAULT_AVAILABILITY_DAYS } from "./availability.js";
export { CLIENT_VERSION, type ClientOptions, PlatformClient } from "./client.js";
export { PlatformConnectionError, PlatformError } from "./errors.js";
// The generated types: paths, operations, components, webhooks, and each schema by name (Deal, Meeting, …).
export type * from "./generated/openapi.js";
export { API_PREFIX, OPERATIONS } from "./generated/operations.js";
export { lastResponse, type ResponseMeta } from "./last-response.js";
export { type PageOf, PageRequest } from "./pagination.js";
export {
  isProblemName,
  type PlatformProblem,
  PROBLEM_CATALOG,
  type ProblemExtensions,
  type ProblemName,
  type ProblemOf,
  parseProblem,
} from "./problems.js";
export { RESOURCES, type Resources, STREAMING_OPERATIONS } from "./resources.js";
export { DEFAULT_RETRY, type RetryOptions } from "./retry.js";
export type {
  ApiResponse,
  ArgsOf,
  BodyOf,
  CallOptions,
  HttpMethod,
  InputOf,
  ItemOf,
  OperationId,
  OperationMethod,
  OptionsOf,
  PaginatedOperationId,
  PathFor,
  PathParamsOf,
  QueryOf,
  RequestOptions,
  ResponseOf,
} from "./types.js";
export {
  type AnyWebhookEvent,
  generateTestWebhookHeaders,
  isV2Event,
  type LegacyWebhookEvent,
  type TestHeaderOptions,
  type VerifyOptions,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  type WebhookSignatureHeaders,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from "./webhooks.js";
