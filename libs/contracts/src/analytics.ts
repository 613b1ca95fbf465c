export * from "./gen/platform/analytics/v1/admin_pb.js";
export * from "./gen/platform/analytics/v1/buyer_signals_pb.js";
export * from "./gen/platform/analytics/v1/email_blasts_pb.js";
