export * from "../gen/platform/events/revenue/v1/events_pb.js";
