export * from "./gen/platform/revenue/v1/deal_pb.js";
export * from "./gen/platform/revenue/v1/insight_pb.js";
export * from "./gen/platform/revenue/v1/qna_pb.js";
export * from "./gen/platform/revenue/v1/schema_pb.js";
