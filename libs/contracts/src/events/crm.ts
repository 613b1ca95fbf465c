export * from "../gen/platform/events/crm/v1/events_pb.js";
