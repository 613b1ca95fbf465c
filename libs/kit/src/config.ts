/**
 * Typed configuration from the environment: parsed once at start, failing fast with a
 * message that names the variable. Each variable has a default, a description and a
 * sensitive flag (never printed).
 */
export interface VarSpec<T> {
  description: string;
  default?: T | undefined;
  sensitive?: boolean;
  parse: (raw: string) => T;
}

export type ConfigSpec = Record<string, VarSpec<unknown>>;
export type ConfigOf<S extends ConfigSpec> = { [K in keyof S]: S[K] extends VarSpec<infer T> ? T : never };

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`configuration: ${variable} ${reason}`);
    this.name = "ConfigError";
  }
}

export function loadConfig<S extends ConfigSpec>(spec: S, env: NodeJS.ProcessEnv = process.env): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(spec)) {
    const raw = env[name];
    if (raw === undefined || raw === "") {
      if (!("default" in v)) throw new ConfigError(name, `is required: ${v.description}`);
      out[name] = v.default;
      continue;
    }
    try {
      out[name] = v.parse(raw);
    } catch (err) {
      const shown = v.sensitive ? "(value hidden)" : JSON.stringify(raw);
      throw new ConfigError(name, `is invalid ${shown}: ${(err as Error).message}`);
    }
  }
  if (out.PLATFORM_ENV === "production") refuseDevelopmentDefaults(spec, env);
  return out as ConfigOf<S>;
}

/**
 * The development defaults of secrets are public (they are in this repository), so a
 * production process must be given each one explicitly, and not the default's value.
 */
function refuseDevelopmentDefaults(spec: ConfigSpec, env: NodeJS.ProcessEnv): void {
  const missing = Object.entries(spec)
    .filter(([name, v]) => v.sensitive && v.default !== undefined && (!env[name] || env[name] === String(v.default)))
    .map(([name]) => name);
  if (missing.length > 0) {
    throw new ConfigError(
      missing.join(", "),
      `must be set explicitly when PLATFORM_ENV=production (the development defaults are public)`,
    );
  }
}

/** Rows for `--help` and the README: name, default, description; sensitive defaults hidden. */
export function describeConfig(spec: ConfigSpec): { name: string; default: string; description: string }[] {
  return Object.entries(spec).map(([name, v]) => ({
    name,
    default: v.sensitive ? "(secret)" : v.default === undefined ? "(unset)" : String(v.default),
    description: v.description,
  }));
}

export const parse = {
  string: (raw: string) => raw,
  int:
    (min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) =>
    (raw: string) => {
      if (!/^-?\d+$/.test(raw)) throw new Error("expected an integer");
      const n = Number(raw);
      if (n < min || n > max) throw new Error(`expected ${min}..${max}`);
      return n;
    },
  port: (raw: string) => parse.int(0, 65535)(raw),
  url: (raw: string) => {
    new URL(raw);
    return raw.replace(/\/$/, "");
  },
  bool: (raw: string) => {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new Error("expected true or false");
  },
  list: (raw: string) =>
    raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  secret:
    (minLength = 16) =>
    (raw: string) => {
      if (raw.length < minLength) throw new Error(`must be at least ${minLength} characters`);
      return raw;
    },
  oneOf:
    <T extends string>(...values: T[]) =>
    (raw: string): T => {
      if (!values.includes(raw as T)) throw new Error(`expected one of ${values.join(", ")}`);
      return raw as T;
    },
};

/** Settings every process shares. */
export const commonConfig = {
  PLATFORM_ENV: {
    description:
      "development or production; production refuses to start while a secret or database URL is left at its development default",
    default: "development",
    parse: parse.oneOf("development", "production"),
  },
  PLATFORM_CONTEXT_SECRET: {
    description: "HMAC secret shared by the gateway and the services to sign the request context",
    default: "dev-context-secret-change-me-0123456789",
    sensitive: true,
    parse: parse.secret(16),
  },
  PLATFORM_CURSOR_SECRET: {
    description: "HMAC secret of pagination cursors, shared by the gateway (verifies) and the services (mint)",
    default: "dev-cursor-secret-change-me-0123456789",
    sensitive: true,
    parse: parse.secret(16),
  },
  PLATFORM_DOCS_URL: {
    description: "Base of the error-type URLs in problem bodies",
    default: "https://docs.platform.example",
    parse: parse.url,
  },
  LOG_LEVEL: {
    description: "pino log level (fatal, error, warn, info, debug, trace, silent)",
    default: "info",
    parse: parse.oneOf("fatal", "error", "warn", "info", "debug", "trace", "silent"),
  },
  SHUTDOWN_TIMEOUT_MS: {
    description:
      "How long a process drains after SIGTERM (requests in flight, consumers, the outbox round) before it exits anyway; a second signal exits at once",
    default: 20_000,
    parse: parse.int(100, 600_000),
  },
} satisfies ConfigSpec;

/** Settings every service process has (the distributed runtime's bus, sandbox and migrations). */
export const serviceConfig = {
  KAFKA_BROKERS: {
    description: "Comma-separated Kafka brokers; unset uses an in-process bus",
    default: [] as string[],
    parse: parse.list,
  },
  KAFKA_GROUP_INSTANCE_ID: {
    description:
      "This process's static member id in its Kafka consumer groups (unique per live process, e.g. the pod's name): restarted after a crash, it consumes again at once instead of after the dead member's 10 s session (and a webhook delivery worker frees the attempts its dead run held leased); unset joins dynamically",
    default: "",
    parse: parse.string,
  },
  SANDBOX_SEED: {
    description: "Seed the sandbox ids and keys derive from (the same in every service)",
    default: "sandbox",
    parse: parse.string,
  },
  SANDBOX_ENABLED: { description: "Seed the sandbox on start when missing", default: true, parse: parse.bool },
  MIGRATE_ONLY: { description: "Apply migrations and exit", default: false, parse: parse.bool },
  SERVICE_RPC_TIMEOUT_MS: {
    description:
      "Longest deadline of a call to another service; a call made while serving an RPC gets what remains of that RPC's deadline when that is shorter (504 upstream-timeout past it)",
    default: 10_000,
    parse: parse.int(100, 55_000),
  },
} satisfies ConfigSpec;

/** The bearer secret of a service's admin plane (the CLI and the ingestion clients send it). */
export const adminPlaneConfig = {
  PLATFORM_ADMIN_SECRET: {
    description: "Bearer secret the admin plane requires (the CLI sends it)",
    default: "dev-admin-secret-change-me",
    sensitive: true,
    parse: parse.secret(16),
  },
} satisfies ConfigSpec;
