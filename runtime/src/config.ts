import { type ConfigSpec, commonConfig, parse } from "@platform/kit/config";

/** Settings of the embedded runtime (`npm start`). */
export const embeddedConfigSpec = {
  ...commonConfig,
  PORT: { description: "HTTP port of the gateway", default: 8080, parse: parse.port },
  HOST: { description: "Interface the gateway listens on", default: "127.0.0.1", parse: parse.string },
  ADMIN_PORT: {
    description:
      "Port of the admin plane (Connect, HTTP/2); unset: PORT + 1 (8081), where the CLI looks; 0 disables it",
    default: undefined as number | undefined,
    parse: parse.port,
  },
  PLATFORM_DATA_DIR: {
    description: "Where the embedded Postgres (PGlite) keeps its data",
    default: "./.data",
    parse: parse.string,
  },
  PLATFORM_ADMIN_SECRET: {
    description: "Bearer secret of the admin plane (CLI)",
    default: "dev-admin-secret-change-me",
    sensitive: true,
    parse: parse.secret(8),
  },
  SANDBOX_SEED: {
    description: "Seed from which the sandbox's ids and keys are derived",
    default: "sandbox",
    parse: parse.string,
  },
  SANDBOX_ENABLED: { description: "Seed the sandbox on first start", default: true, parse: parse.bool },
  DISK_CHECK_INTERVAL_MS: {
    description: "How often the data directory is checked for writes; while it cannot be written the API answers 503",
    default: 1000,
    parse: parse.int(100),
  },
  BODY_LIMIT_BYTES: { description: "Largest accepted request body", default: 1_048_576, parse: parse.int(1) },
  SLOT_TOKEN_SECRET: {
    description: "HMAC secret of the signed slot tokens",
    default: "dev-slot-token-secret-change-me",
    sensitive: true,
    parse: parse.secret(16),
  },
  BOOKING_BASE_URL: {
    description: "Base of the reschedule and cancel links in meetings",
    default: "https://book.platform.example",
    parse: parse.url,
  },
} satisfies ConfigSpec;
