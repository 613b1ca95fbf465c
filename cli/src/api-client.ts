import { randomUUID } from "node:crypto";

/** The public API as the CLI's event commands use it: an API key, not the admin plane. */
export const DEFAULT_API_URL = "http://127.0.0.1:8080/api/v1alpha1";
const API_PREFIX = "/api/v1alpha1";
const CALL_TIMEOUT_MS = 15_000;

/** A failure already phrased for the user. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly problem?: string,
  ) {
    super(message);
  }
}

/** `http://host:port` and `http://host:port/api/v1alpha1` both name the API (trailing slash ignored). */
export function apiBase(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError(`--api-url must be an http(s) URL such as ${DEFAULT_API_URL}, not '${raw}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ApiError(`--api-url must be an http(s) URL, not '${raw}'`);
  }
  const path = url.pathname.replace(/\/+$/, "");
  return `${url.origin}${path === "" ? API_PREFIX : path}`;
}

/** The last segment of a problem's type URL (`…/errors/invalid-cursor` → `invalid-cursor`). */
function problemName(type: unknown): string | undefined {
  return typeof type === "string" ? type.split("/").pop() : undefined;
}

/** Turns a non-2xx answer into one line: the problem's name and detail when it is problem+json. */
export async function failure(res: Response, what: string): Promise<ApiError> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { type?: string; detail?: string; requiredScope?: string };
    const name = problemName(body.type);
    // A key lacking a scope is the commonest failure of `trigger`: name the scope to grant.
    const scope =
      body.requiredScope && !body.detail?.includes(body.requiredScope) ? ` (the key needs ${body.requiredScope})` : "";
    if (name)
      return new ApiError(`${what}: ${res.status} ${name}: ${body.detail ?? ""}${scope}`.trim(), res.status, name);
  } catch {
    // not JSON: fall through to the status line
  }
  return new ApiError(`${what}: HTTP ${res.status}${text ? ` ${text.slice(0, 200)}` : ""}`, res.status);
}

export interface ApiClient {
  readonly base: string;
  /** Sends a JSON request; writes (POST, PATCH) carry a fresh Idempotency-Key. Resolves to the parsed body (undefined for 204). */
  request<T = unknown>(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown): Promise<T>;
}

export function apiClient(baseUrl: string, apiKey: string): ApiClient {
  const base = apiBase(baseUrl);
  return {
    base,
    async request<T>(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown) {
      let res: Response;
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers: {
            "x-platform-api-key": apiKey,
            accept: "application/json",
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...(method === "POST" || method === "PATCH" ? { "idempotency-key": randomUUID() } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
        throw new ApiError(
          `cannot reach the API at ${base} (${cause}); is the platform running? \`npm start\` runs it; on other ports, export PLATFORM_URL as its banner says, or pass --api-url`,
        );
      }
      if (!res.ok) throw await failure(res, `${method} ${path}`);
      if (res.status === 204) return undefined as T;
      return (await res.json()) as T;
    },
  };
}
