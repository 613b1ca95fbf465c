import { PROBLEM_CATALOG, type ProblemName } from "./generated/problems.js";

export { PROBLEM_CATALOG, type ProblemName };

/** Members every problem body has (RFC 9457), as the platform sends them. */
interface ProblemBase {
  /** The full type URI: `{docs_url}/platform-api/errors/<name>`. */
  typeUri: string;
  title: string;
  status: number;
  detail: string;
  /** Id of the request, as in X-Request-Id; quote it when reporting. */
  requestId?: string;
}

/** The extension members the spec's error table names, by problem type. */
export interface ProblemExtensions {
  "subscription-expired": { expiredAt: string };
  "insufficient-scope": { requiredScope: string };
  "seat-limit-exceeded": { seatLimit: number; remainingSeats: number };
  "delegation-scope-insufficient": { requiredScope: string; grantedScopes: string[] };
  "invalid-sort-field": { field: string; allowedSortFields: string[] };
  "invalid-filter": { field?: string };
  "invalid-field": { field?: string };
  "invalid-email": { field?: string };
  "availability-request-invalid": { field?: string };
  "slot-conflict": { rerunAvailability: true };
  "qna-transition-invalid": { currentState: string };
  "deal-closed": { stage: string };
  "email-already-in-use": { existingUserId: string };
  "form-validation": { fieldErrors: { field: string; message: string }[] };
}

type Extensions<N extends ProblemName> = N extends keyof ProblemExtensions ? ProblemExtensions[N] : unknown;

/** One problem type: `type` is the spec's error name, with that type's extension members. */
export type ProblemOf<N extends ProblemName> = ProblemBase & { type: N } & Extensions<N>;

/**
 * Every problem the platform answers with, discriminated by `type`: the spec's error name
 * (the last segment of the body's `type` URI, which `typeUri` keeps). Narrow with
 * `switch (problem.type)` or `err.is("slot-conflict")`.
 */
export type PlatformProblem = { [N in ProblemName]: ProblemOf<N> }[ProblemName];

const TYPE_URI = /\/platform-api\/errors\/([a-z0-9-]+)$/;

export function isProblemName(name: string): name is ProblemName {
  return Object.hasOwn(PROBLEM_CATALOG, name);
}

/**
 * The typed problem of a problem+json body, or undefined when the body is not one of the
 * spec's problems (e.g. a proxy's HTML error page).
 */
export function parseProblem(body: unknown): PlatformProblem | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const raw = body as Record<string, unknown>;
  if (typeof raw.type !== "string") return undefined;
  const name = TYPE_URI.exec(raw.type)?.[1];
  if (!name || !isProblemName(name)) return undefined;
  return { ...raw, type: name, typeUri: raw.type } as PlatformProblem;
}
