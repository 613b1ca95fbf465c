export * from "../gen/platform/events/scheduling/v1/events_pb.js";
