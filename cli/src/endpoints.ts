// Where the CLI finds the platform. One setting, PLATFORM_URL (the address `npm start` prints),
// gives both: the API below it and the admin plane on the next port (the embedded runtime's
// default ADMIN_PORT is PORT + 1). PLATFORM_API_URL and PLATFORM_ADMIN_URL still win when set.

export const DEFAULT_PLATFORM_URL = "http://127.0.0.1:8080";
export const API_PREFIX = "/api/v1alpha1";

export interface Endpoints {
  apiUrl: string;
  adminUrl: string;
}

/** The admin plane next to a platform address: same host, the next port. Undefined when `raw` is not an http(s) URL. */
export function adminUrlOf(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return `http://${url.hostname}:${port + 1}`;
}

/** The API and admin addresses from the environment: the specific variables, else PLATFORM_URL, else the defaults. */
export function endpoints(env: Record<string, string | undefined>): Endpoints {
  // The API's own address (…/api/v1alpha1) is accepted as PLATFORM_URL too.
  const platform = (env.PLATFORM_URL || DEFAULT_PLATFORM_URL).replace(/\/+$/, "").replace(/\/api\/v1alpha1$/, "");
  return {
    apiUrl: env.PLATFORM_API_URL || `${platform}${API_PREFIX}`,
    adminUrl: env.PLATFORM_ADMIN_URL || adminUrlOf(platform) || platform,
  };
}
