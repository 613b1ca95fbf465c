export * from "./gen/grpc/health/v1/health_pb.js";
