import { type ConfigOf, commonConfig, loadConfig, parse } from "@platform/kit/config";

/** The identity service's settings; `describeConfig(identityConfigSpec)` lists them. */
export const identityConfigSpec = {
  ...commonConfig,
  DATABASE_URL: {
    description: "Postgres URL of the identity database (created when missing)",
    default: "postgres://postgres@127.0.0.1:5432/platform_identity",
    sensitive: true,
    parse: parse.url,
  },
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7101, parse: parse.port },
  ADMIN_PORT: { description: "Port of the admin plane (tokens, partners)", default: 8081, parse: parse.port },
  PLATFORM_ADMIN_SECRET: {
    description: "Bearer secret the admin plane requires (the CLI sends it)",
    default: "dev-admin-secret-change-me",
    sensitive: true,
    parse: parse.secret(16),
  },
  KAFKA_BROKERS: {
    description: "Comma-separated Kafka brokers; unset uses an in-process bus",
    default: [] as string[],
    parse: parse.list,
  },
  SANDBOX_SEED: { description: "Seed the sandbox ids and keys derive from", default: "sandbox", parse: parse.string },
  SANDBOX_ENABLED: { description: "Seed the sandbox on start when missing", default: true, parse: parse.bool },
  MIGRATE_ONLY: { description: "Apply migrations and exit", default: false, parse: parse.bool },
};

export type IdentityConfig = ConfigOf<typeof identityConfigSpec>;

export function loadIdentityConfig(env: NodeJS.ProcessEnv = process.env): IdentityConfig {
  return loadConfig(identityConfigSpec, env);
}
