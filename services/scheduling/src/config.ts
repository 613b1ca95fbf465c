import { type ConfigOf, commonConfig, loadConfig, parse } from "@platform/kit/config";

/** The scheduling service's settings; `describeConfig(schedulingConfigSpec)` lists them. */
export const schedulingConfigSpec = {
  ...commonConfig,
  DATABASE_URL: {
    description: "Postgres URL of the scheduling database (created when missing)",
    default: "postgres://postgres@127.0.0.1:5432/platform_scheduling",
    sensitive: true,
    parse: parse.url,
  },
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7102, parse: parse.port },
  SLOT_TOKEN_SECRET: {
    description: "HMAC secret slot tokens are signed with (availability signs, booking verifies)",
    default: "dev-slot-token-secret-change-me-0123456789",
    sensitive: true,
    parse: parse.secret(16),
  },
  BOOKING_BASE_URL: {
    description: "Base of the reschedule and cancel links of a meeting",
    default: "https://book.platform.example",
    parse: parse.url,
  },
  KAFKA_BROKERS: {
    description: "Comma-separated Kafka brokers; unset uses an in-process bus",
    default: [] as string[],
    parse: parse.list,
  },
  SANDBOX_SEED: {
    description: "Seed the sandbox ids derive from (the same as identity's, so hosts are its users)",
    default: "sandbox",
    parse: parse.string,
  },
  SANDBOX_ENABLED: { description: "Seed the sandbox on start when missing", default: true, parse: parse.bool },
  MIGRATE_ONLY: { description: "Apply migrations and exit", default: false, parse: parse.bool },
};

export type SchedulingConfig = ConfigOf<typeof schedulingConfigSpec>;

export function loadSchedulingConfig(env: NodeJS.ProcessEnv = process.env): SchedulingConfig {
  return loadConfig(schedulingConfigSpec, env);
}
