import { Writable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY_LENGTH, generateApiKey, hashApiKey, isApiKeyShape, seededApiKey } from "../src/api-keys.js";
import { ManualClock } from "../src/clock.js";
import { ConfigError, commonConfig, loadConfig, parse } from "../src/config.js";
import { problemFromError, problemToConnectError } from "../src/connect.js";
import { signContext, verifyContext } from "../src/context.js";
import { openPglite, pgliteDb } from "../src/db.js";
import { idSequence, isId, newId, parseId, seededId } from "../src/ids.js";
import { createLogger, infoLineWriter } from "../src/logger.js";
import { migrate } from "../src/migrate.js";
import { ProblemError, problem, problemBody } from "../src/problems.js";

function problemOf(fn: () => unknown): ProblemError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error("expected a problem");
}

describe("config", () => {
  const spec = {
    PORT: { description: "port", default: 8080, parse: parse.port },
    SECRET: { description: "a secret", sensitive: true, parse: parse.secret(8) },
  };

  it("applies defaults and parses values", () => {
    expect(loadConfig(spec, { SECRET: "abcdefgh" })).toEqual({ PORT: 8080, SECRET: "abcdefgh" });
    expect(loadConfig(spec, { PORT: "9090", SECRET: "abcdefgh" }).PORT).toBe(9090);
  });

  it("names the bad variable, and never prints a sensitive value", () => {
    expect(() => loadConfig(spec, { PORT: "eighty", SECRET: "abcdefgh" })).toThrow(/PORT is invalid "eighty"/);
    expect(() => loadConfig(spec, {})).toThrow(new ConfigError("SECRET", "is required: a secret"));
    const err = (() => {
      try {
        loadConfig(spec, { SECRET: "short" });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).toMatch(/SECRET is invalid \(value hidden\)/);
    expect(err?.message).not.toContain("short");
  });

  it("has defaults for the settings every process shares", () => {
    const c = loadConfig(commonConfig, {});
    expect(c.PLATFORM_DOCS_URL).toMatch(/^https:\/\//);
    expect(c.PLATFORM_CONTEXT_SECRET.length).toBeGreaterThanOrEqual(16);
    expect(c.PLATFORM_ENV).toBe("development");
  });

  it("refuses to start in production while a secret is left at its public development default", () => {
    const secrets = {
      PLATFORM_CONTEXT_SECRET: "prod-context-secret-0123456789",
      PLATFORM_CURSOR_SECRET: "prod-cursor-secret-0123456789",
    };
    expect(() => loadConfig(commonConfig, { PLATFORM_ENV: "production" })).toThrow(
      new ConfigError(
        "PLATFORM_CONTEXT_SECRET, PLATFORM_CURSOR_SECRET",
        "must be set explicitly when PLATFORM_ENV=production (the development defaults are public)",
      ),
    );
    // The default's own value, set explicitly, is still the public one.
    const copied = { ...secrets, PLATFORM_CURSOR_SECRET: String(commonConfig.PLATFORM_CURSOR_SECRET.default) };
    expect(() => loadConfig(commonConfig, { PLATFORM_ENV: "production", ...copied })).toThrow(
      /^configuration: PLATFORM_CURSOR_SECRET must be set explicitly/,
    );
    expect(loadConfig(commonConfig, { PLATFORM_ENV: "production", ...secrets }).PLATFORM_ENV).toBe("production");
    // Development accepts the defaults, and an unknown environment is a typo, not development.
    expect(loadConfig(commonConfig, { PLATFORM_ENV: "development" }).PLATFORM_ENV).toBe("development");
    expect(() => loadConfig(commonConfig, { PLATFORM_ENV: "prod" })).toThrow(/PLATFORM_ENV is invalid "prod"/);
  });
});

describe("signed request context", () => {
  const clock = new ManualClock("2026-05-01T00:00:00Z");
  const ctx = { principal: "api" as const, requestId: "req_1", orgId: "org_a", tokenId: "tok_a", scopes: ["x:read"] };

  it("round-trips", () => {
    expect(verifyContext(signContext(ctx, "secret-one-0123456789", clock), "secret-one-0123456789", clock)).toEqual(
      ctx,
    );
  });

  it("rejects a missing, tampered or foreign context with missing-trust-header, a stale one with upstream-timeout", () => {
    const signed = signContext(ctx, "secret-one-0123456789", clock);
    const [payload, mac] = signed.split(".");
    const forged = `${Buffer.from(JSON.stringify({ ...ctx, orgId: "org_b", iat: clock.now().getTime() })).toString("base64url")}.${mac}`;
    for (const header of [undefined, "", "garbage", forged, `${payload}.`, signed.replace(/.$/, "A")]) {
      expect(problemOf(() => verifyContext(header, "secret-one-0123456789", clock)).problemName).toBe(
        "missing-trust-header",
      );
    }
    expect(problemOf(() => verifyContext(signed, "secret-two-0123456789", clock)).status).toBe(401);
    const later = new ManualClock(clock.now());
    later.advance(61_000);
    // Still refused, but as what it is: a call that outlived its deadline (a paused service),
    // which the gateway passes on as 504 instead of blaming its own credentials with a 500.
    expect(problemOf(() => verifyContext(signed, "secret-one-0123456789", later)).problemName).toBe("upstream-timeout");
    const earlier = new ManualClock(clock.now());
    earlier.advance(-61_000);
    expect(problemOf(() => verifyContext(signed, "secret-one-0123456789", earlier)).status).toBe(503);
  });
});

describe("ids", () => {
  it("makes prefixed ids and rejects a wrong prefix or shape with invalid-resource-id", () => {
    const id = newId("org_");
    expect(id).toMatch(/^org_[0-9a-z]{24}$/);
    expect(isId("org_", id)).toBe(true);
    expect(parseId("org_", id)).toBe(id);
    expect(seededId("usr_", "seed", "x")).toBe(seededId("usr_", "seed", "x"));
    expect(seededId("usr_", "seed", "x")).not.toBe(seededId("usr_", "other", "x"));
    for (const bad of [`usr_${id.slice(4)}`, "org_short", `${id}x`, "org_ABCDEFGHJKMNPQRSTVWXYZ01", ""]) {
      const p = problemOf(() => parseId("org_", bad, "orgId"));
      expect(p.problemName).toBe("invalid-resource-id");
      expect(p.extensions).toEqual({ parameter: "orgId" });
    }
  });

  it("counts ids of the same shape behind a random prefix per sequence", () => {
    const next = idSequence("req_");
    const ids = Array.from({ length: 1000 }, next);
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) expect(isId("req_", id)).toBe(true);
    expect(ids[0]?.slice(0, 16)).toBe(ids[999]?.slice(0, 16));
    // Another sequence (another process, another gateway instance) starts elsewhere.
    expect(idSequence("req_")().slice(0, 16)).not.toBe(ids[0]?.slice(0, 16));
  });
});

describe("API keys", () => {
  it("are 56 characters: the live prefix and 48 URL-safe characters", () => {
    const key = generateApiKey();
    expect(key).toHaveLength(API_KEY_LENGTH);
    expect(isApiKeyShape(key)).toBe(true);
    expect(isApiKeyShape(`${key}x`)).toBe(false);
    expect(isApiKeyShape(key.replace("pk_live_", "pk_test_"))).toBe(false);
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("derives sandbox keys from the seed, without padding", () => {
    const key = seededApiKey("seed", "acme-full");
    expect(isApiKeyShape(key)).toBe(true);
    expect(key).toBe(seededApiKey("seed", "acme-full"));
    expect(key).not.toBe(seededApiKey("seed", "acme-readonly"));
    expect(key).not.toMatch(/AAAA$/);
  });
});

describe("problems", () => {
  it("renders RFC 9457 bodies whose extensions cannot override the standard members", () => {
    const body = problemBody(
      problem("insufficient-scope", "needs x", { requiredScope: "x:read", status: 999 }),
      "https://d.example/",
      "req_9",
    );
    expect(body).toEqual({
      type: "https://d.example/platform-api/errors/insufficient-scope",
      title: "Insufficient scope",
      status: 403,
      detail: "needs x",
      requiredScope: "x:read",
      requestId: "req_9",
    });
  });

  it("cross Connect as an error detail and come back typed", () => {
    const sent = problem("subscription-expired", "expired", { expiredAt: "2025-01-01T00:00:00.000Z" });
    const wire = ConnectError.from(problemToConnectError(sent));
    expect(wire.code).toBe(Code.Unauthenticated);
    const back = problemFromError(wire);
    expect(back.problemName).toBe("subscription-expired");
    expect(back.status).toBe(401);
    expect(back.extensions).toEqual({ expiredAt: "2025-01-01T00:00:00.000Z" });
  });

  it("hide unknown failures and name an unreachable service", () => {
    expect(problemFromError(new Error("SELECT * FROM secrets failed")).problemName).toBe("internal");
    expect(problemFromError(new Error("x")).detail).not.toContain("SELECT");
    expect(problemFromError(new ConnectError("down", Code.Unavailable)).problemName).toBe("service-unavailable");
  });
});

describe("migrations", () => {
  let instance: Awaited<ReturnType<typeof openPglite>>;
  const dir = new URL("./fixtures/migrations", import.meta.url).pathname;
  beforeAll(async () => {
    instance = await openPglite();
  });
  afterAll(() => instance.close());

  it("apply each numbered file once, in order, into the service's schema", async () => {
    const db = pgliteDb(instance, "mig_test");
    expect(await migrate(db, [{ name: "svc", dir }])).toEqual(["svc/001_first.sql", "svc/002_second.sql"]);
    expect(await migrate(db, [{ name: "svc", dir }])).toEqual([]);
    expect(await db.query("SELECT name FROM mig_test.things ORDER BY id")).toEqual([{ name: "one" }, { name: "two" }]);
  });

  it("roll a failing file back whole, recording nothing", async () => {
    const db = pgliteDb(instance, "mig_broken");
    const broken = new URL("./fixtures/broken-migrations", import.meta.url).pathname;
    await expect(migrate(db, [{ name: "svc", dir: broken }])).rejects.toThrow();
    expect(await db.query("SELECT version FROM mig_broken.schema_migrations")).toEqual([{ version: 1 }]);
    expect(await db.query("SELECT to_regclass('mig_broken.half') AS t")).toEqual([{ t: null }]);
  });
});

describe("JSON logs", () => {
  const manager = new AsyncLocalStorageContextManager().enable();
  beforeAll(() => {
    context.setGlobalContextManager(manager);
  });
  afterAll(() => {
    context.disable();
  });

  it("carry the active trace and span ids", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger("svc", "info", sink);
    const span = trace.wrapSpanContext({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: 1,
    });
    context.with(trace.setSpan(context.active(), span), () => logger.info("inside"));
    logger.info("outside");
    const [inside, outside] = lines.map((l) => JSON.parse(l));
    expect(inside).toMatchObject({
      service: "svc",
      msg: "inside",
      trace_id: "0af7651916cd43dd8448eb211c80319c",
      span_id: "b7ad6b7169203331",
    });
    expect(outside.trace_id).toBeUndefined();
  });

  function sinkLines() {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { lines, sink };
  }

  it("an info line written straight to the stream is the line pino writes, byte for byte but the time", () => {
    const { lines, sink } = sinkLines();
    const logger = createLogger("svc", "info", sink);
    const write = infoLineWriter(logger);
    expect(write).toBeDefined();
    const fields = { method: "GET", route: '/a/"quoted"\\path', status: 200, durationMs: 1.25, requestId: "req_é\n" };
    logger.info(fields, "request");
    const json = Object.entries(fields)
      .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
      .join(",");
    expect(write?.(json, "request")).toBe(true);
    expect(write?.("", "bare")).toBe(true);
    logger.info("bare");
    const [viaPino, direct, bareDirect, barePino] = lines.map((l) => l.replace(/"time":"[^"]+"/, '"time":"T"'));
    expect(direct).toBe(viaPino);
    expect(bareDirect).toBe(barePino);
    expect(lines[1]).toMatch(
      /^\{"level":30,"time":"\d{4}-\d\d-\d\dT[\d:.]+Z","service":"svc","name":"svc","method":"GET"/,
    );
    expect(lines[1]?.endsWith('"msg":"request"}\n')).toBe(true);
  });

  it("writes the active span's ids where pino's mixin puts them; below the level nothing; knows only its own loggers", () => {
    const { lines, sink } = sinkLines();
    const logger = createLogger("svc", "info", sink);
    const write = infoLineWriter(logger);
    const span = trace.wrapSpanContext({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: 1,
    });
    context.with(trace.setSpan(context.active(), span), () => {
      expect(write?.('"a":1', "inside")).toBe(true);
      logger.info({ a: 1 }, "inside");
    });
    const [direct, viaPino] = lines.splice(0).map((l) => l.replace(/"time":"[^"]+"/, '"time":"T"'));
    expect(direct).toBe(viaPino);
    expect(direct).toContain(
      '"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331","trace_flags":1,"a":1',
    );
    const quiet = infoLineWriter(createLogger("svc", "warn", sink));
    expect(quiet?.('"a":1', "dropped")).toBe(true);
    expect(lines).toEqual([]);
    const other = createLogger("svc", "info", sink).child({ part: "x" });
    expect(infoLineWriter(other)).toBeUndefined();
  });
});
