export * from "./gen/platform/requestlogs/v1/request_logs_pb.js";

/** The status classes GET /request-logs filters on. */
export const STATUS_CLASSES = ["2xx", "3xx", "4xx", "5xx"] as const;

/** How long request logs are kept, in days; the list's time filters reach no further back. */
export const REQUEST_LOG_RETENTION_DAYS = 7;
