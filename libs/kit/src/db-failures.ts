// Which database errors mean "unavailable, retry" (503) and which mean "cut at the deadline".
// Connection-level failures: SQLSTATE class 08, the server shutting down or terminating the
// backend (57P01-57P03), too many connections, and the driver's socket errors.
// 58030 (io_error): the embedded database's directory cannot be written (DiskFailedError).
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "58030"]);
const UNAVAILABLE_ERRNOS = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended|pool after calling end|PGlite is closed/i;

/**
 * True when `err` says the database could not be reached or the connection was lost (as
 * opposed to the statement being wrong): the work can be retried as it is, so the request
 * that met it gets a retryable 503 rather than a 500.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (
    typeof code === "string" &&
    (code.startsWith("08") || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))
  ) {
    return true;
  }
  return UNAVAILABLE_MESSAGES.test(err.message);
}

/** SQLSTATE query_canceled: here, a transaction's statement_timeout (its call's deadline) cut a query. */
export function isStatementTimeout(err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === "57014";
}
