import { type ConfigOf, parse } from "@platform/kit/config";
import { configLoader, serviceProcessConfig } from "@platform/kit/service-config";

/** The scheduling service's settings; `describeConfig(schedulingConfigSpec)` lists them. */
/** Base of the reschedule and cancel links when BOOKING_BASE_URL is unset. */
export const DEFAULT_BOOKING_BASE_URL = "https://book.platform.example";

export const schedulingConfigSpec = {
  ...serviceProcessConfig("scheduling", "scheduling"),
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7102, parse: parse.port },
  SLOT_TOKEN_SECRET: {
    description: "HMAC secret slot tokens are signed with (availability signs, booking verifies)",
    default: "dev-slot-token-secret-change-me-0123456789",
    sensitive: true,
    parse: parse.secret(16),
  },
  SIGNING_THREADS: {
    description:
      "Worker threads that sign the slot tokens of large availability answers (0: sign on the event loop, in turns)",
    default: 2,
    parse: parse.int(0, 16),
  },
  BOOKING_BASE_URL: {
    description: "Base of the reschedule and cancel links of a meeting",
    default: DEFAULT_BOOKING_BASE_URL,
    parse: parse.url,
  },
};

export type SchedulingConfig = ConfigOf<typeof schedulingConfigSpec>;

export const loadSchedulingConfig = configLoader(schedulingConfigSpec);
