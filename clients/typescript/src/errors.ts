import type { PlatformProblem, ProblemName, ProblemOf } from "./problems.js";

/** An error answer of the API (status ≥ 400), after any retries. */
export class PlatformError extends Error {
  /** HTTP status of the answer. */
  readonly status: number;
  /** The typed problem; undefined when the body was not one of the spec's problems. */
  readonly problem: PlatformProblem | undefined;
  /** X-Request-Id of the answer (or the problem's requestId); quote it when reporting. */
  readonly requestId: string | undefined;
  /** The response body as received (parsed JSON when it was JSON). */
  readonly body: unknown;
  /** Response headers of the answer. */
  readonly headers: Headers;
  /** How many requests the call made, retries included. */
  readonly attempts: number;

  constructor(init: {
    status: number;
    problem: PlatformProblem | undefined;
    requestId: string | undefined;
    body: unknown;
    headers: Headers;
    attempts: number;
    method: string;
    path: string;
  }) {
    const what = init.problem ? `${init.problem.type}: ${init.problem.detail}` : "no problem details";
    super(`${init.method} ${init.path} failed with ${init.status} (${what})`);
    this.name = "PlatformError";
    this.status = init.status;
    this.problem = init.problem;
    this.requestId = init.requestId;
    this.body = init.body;
    this.headers = init.headers;
    this.attempts = init.attempts;
  }

  /** The problem's type name (e.g. "deal-not-found"), when the answer carried a problem. */
  get type(): ProblemName | undefined {
    return this.problem?.type;
  }

  /** True when the problem is of this type; narrows `problem` to it, extension members included. */
  is<N extends ProblemName>(name: N): this is PlatformError & { problem: ProblemOf<N> } {
    return this.problem?.type === name;
  }
}

/** The request never got an answer: a network failure, a timeout or an abort, after any retries. */
export class PlatformConnectionError extends Error {
  readonly attempts: number;

  constructor(message: string, options: { cause: unknown; attempts: number }) {
    super(message, { cause: options.cause });
    this.name = "PlatformConnectionError";
    this.attempts = options.attempts;
  }
}
