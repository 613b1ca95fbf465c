// The admin plane as the admin commands reach it: its address, secret and client, and how a failed
// call reads to the user.
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { ProblemSchema } from "@platform/contracts/common";
import type { IdentityAdminService } from "@platform/contracts/identity";
import { adminPlaneConfig, serviceConfig } from "@platform/kit/config";

export const DEFAULT_ADMIN_URL = "http://127.0.0.1:8081";
// The platform's defaults for both, from the kit's config (the CLI imports no service).
export const DEFAULT_SANDBOX_SEED = serviceConfig.SANDBOX_SEED.default;
export const DEFAULT_ADMIN_SECRET = adminPlaneConfig.PLATFORM_ADMIN_SECRET.default;
/** The call options of every admin call. */
export const ADMIN_CALL = { timeoutMs: 10_000 };

/** A failure already phrased for the user. */
export class CliError extends Error {}

export type AdminClient = Client<typeof IdentityAdminService>;

/** What the admin commands share: the admin plane's client and where they write. */
export interface AdminCommandDeps {
  /** The admin plane's client, created on first use (once --admin-url is parsed). */
  admin(): AdminClient;
  /** The admin plane's address, from --admin-url or PLATFORM_ADMIN_URL. */
  adminUrl(): string;
  env: Record<string, string | undefined>;
  now(): Date;
  /** Writes a line to stdout. */
  out(line: string): void;
  /** Writes `value` to stdout as indented JSON. */
  json(value: unknown): void;
  stderr(text: string): void;
}

/** Turns a failed admin call into one line naming the cause. */
export function describeFailure(err: unknown, adminUrl: string): string {
  if (err instanceof CliError) return err.message;
  const ce = ConnectError.from(err);
  const [problem] = ce.findDetails(ProblemSchema);
  if (problem) return `${problem.name}: ${problem.detail}`;
  if (ce.code === Code.Unavailable || ce.code === Code.DeadlineExceeded) {
    return `cannot reach the admin plane at ${adminUrl} (${ce.rawMessage}); is the platform running? \`npm start\` runs it; on other ports, export PLATFORM_URL as its banner says, or pass --admin-url`;
  }
  if (ce.code === Code.Unauthenticated) {
    return `the admin plane at ${adminUrl} rejected the admin secret; set PLATFORM_ADMIN_SECRET to the platform's value`;
  }
  return `admin call failed (${Code[ce.code]}): ${ce.rawMessage}`;
}

export function isUnreachable(err: unknown): boolean {
  const code = ConnectError.from(err).code;
  return code === Code.Unavailable || code === Code.DeadlineExceeded;
}
