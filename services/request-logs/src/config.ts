import { type ConfigOf, parse } from "@platform/kit/config";
import { configLoader, serviceProcessConfig } from "@platform/kit/service-config";

/** The request-logs service's settings; `describeConfig(requestLogsConfigSpec)` lists them. */
export const requestLogsConfigSpec = {
  ...serviceProcessConfig("request-logs", "request_logs"),
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7107, parse: parse.port },
  REQUEST_LOGS_CONSUMER_GROUP: {
    description:
      "Kafka consumer group that stores the gateway's request summaries (every replica of a deployment shares it)",
    default: "request-logs-store",
    parse: parse.string,
  },
};

export type RequestLogsConfig = ConfigOf<typeof requestLogsConfigSpec>;

export const loadRequestLogsConfig = configLoader(requestLogsConfigSpec);
