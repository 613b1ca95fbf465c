// Helpers for tests in every package, exported as @platform/kit/testing. It lives outside src/
// so it ships with no production build; scripts/check-imports.ts fails any src/ file that imports it.
import type { DescService } from "@bufbuild/protobuf";
import { type CallOptions, type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import { ProblemSchema } from "@platform/contracts/common";
import type { Clock } from "../src/clock.js";
import {
  errorInterceptor,
  inProcessTransport,
  type Routes,
  signingInterceptor,
  trustInterceptor,
} from "../src/connect.js";
import { newId } from "../src/ids.js";
import { createLogger, type Logger } from "../src/logger.js";

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Who an API call comes from, as the gateway would sign it. */
export interface CallerOptions {
  scopes?: string[];
  tokenId?: string;
  /** Set when a partner delegates: the call then acts on `orgId`, a child of this org. */
  parentOrgId?: string;
  /** The Idempotency-Key; by default every call sends a new one. */
  idempotencyKey?: string;
  /** Send no Idempotency-Key at all. */
  noIdempotencyKey?: boolean;
}

/**
 * A service's API routes as an integrator request acting on `orgId` reaches them through the
 * gateway: in process, each call carrying a freshly signed context (request id, token,
 * scopes, Idempotency-Key) that the real trust interceptor verifies.
 */
export function callerOf(routes: Routes, clock: Clock, opts: { contextSecret: string; defaultScopes?: string[] }) {
  const server = [errorInterceptor(createLogger("test", "silent")), trustInterceptor(opts.contextSecret, clock)];
  return <S extends DescService>(service: S, orgId: string, caller: CallerOptions = {}): Client<S> =>
    createClient(
      service,
      inProcessTransport(routes, server, [
        signingInterceptor(opts.contextSecret, clock, () => ({
          principal: "api",
          requestId: newId("req_"),
          orgId,
          tokenId: caller.tokenId ?? "tok_test",
          scopes: caller.scopes ?? opts.defaultScopes ?? [],
          ...(caller.noIdempotencyKey ? {} : { idempotencyKey: caller.idempotencyKey ?? newId("idem_") }),
          ...(caller.parentOrgId ? { parentOrgId: caller.parentOrgId } : {}),
        })),
      ]),
    );
}

export interface CarriedProblem {
  name: string;
  detail: string;
  extensions: Record<string, unknown>;
}

/** The problem a failed call carried (name, detail and extension fields). */
export async function problemDetailOf(call: Promise<unknown>): Promise<CarriedProblem> {
  try {
    await call;
  } catch (err) {
    const [p] = ConnectError.from(err).findDetails(ProblemSchema);
    if (!p) throw err;
    return { name: p.name, detail: p.detail, extensions: (p.extensions ?? {}) as Record<string, unknown> };
  }
  throw new Error("expected the call to fail");
}

/** The problem name a failed call carried, or the Connect code when it carried none. */
export async function problemOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    const ce = ConnectError.from(err);
    return ce.findDetails(ProblemSchema)[0]?.name ?? `connect:${Code[ce.code]}`;
  }
  throw new Error("expected the call to fail");
}

/** A call's response with its response headers (`x-idempotent-replay`). */
export async function withHeaders<T>(
  call: (options: CallOptions) => Promise<T>,
): Promise<{ response: T; headers: Headers }> {
  let headers = new Headers();
  const response = await call({
    onHeader: (h) => {
      headers = h;
    },
  });
  return { response, headers };
}

/** A logger whose JSON lines are parsed into `lines`, for tests that assert what was logged. */
export function capturingLogger(name: string, level: string, lines: Record<string, unknown>[]): Logger {
  return createLogger(name, level, {
    write: (line: string) => {
      lines.push(JSON.parse(line));
    },
  });
}
