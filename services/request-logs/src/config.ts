import { type ConfigOf, parse } from "@platform/kit/config";
import { configLoader, serviceProcessConfig } from "@platform/kit/service-config";

/** The request-logs service's settings; `describeConfig(requestLogsConfigSpec)` lists them. */
export const requestLogsConfigSpec = {
  ...serviceProcessConfig("request-logs", "request_logs"),
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7107, parse: parse.port },
};

export type RequestLogsConfig = ConfigOf<typeof requestLogsConfigSpec>;

export const loadRequestLogsConfig = configLoader(requestLogsConfigSpec);
