export * from "./gen/platform/common/v1/problem_pb.js";
