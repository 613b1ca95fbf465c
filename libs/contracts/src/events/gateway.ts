export * from "../gen/platform/events/gateway/v1/events_pb.js";
