export * from "../gen/platform/events/requestlogs/v1/events_pb.js";
