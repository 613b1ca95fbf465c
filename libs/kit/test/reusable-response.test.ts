import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "@platform/contracts/health";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpTransport, type RunningServer, serveConnect } from "../src/connect.js";
import { encodeResponse, reusableResponse, reusableResponses } from "../src/reusable-response.js";

const serving = () => create(HealthCheckResponseSchema, { status: HealthCheckResponse_ServingStatus.SERVING });

describe("reusable responses", () => {
  it("are encoded once, and the bytes are the message's encoding", () => {
    const message = reusableResponse(serving());
    const first = encodeResponse(HealthCheckResponseSchema, message);
    expect(encodeResponse(HealthCheckResponseSchema, message)).toBe(first);
    expect(first).toEqual(toBinary(HealthCheckResponseSchema, message));
    expect(fromBinary(HealthCheckResponseSchema, first).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });

  it("leave every other message encoded afresh on each answer", () => {
    const message = serving();
    const first = encodeResponse(HealthCheckResponseSchema, message);
    message.status = HealthCheckResponse_ServingStatus.NOT_SERVING;
    const second = encodeResponse(HealthCheckResponseSchema, message);
    expect(second).not.toBe(first);
    expect(fromBinary(HealthCheckResponseSchema, second).status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
  });

  it("one per key: built once for a key, again for a new key, each encoded once", () => {
    let built = 0;
    const responseFor = reusableResponses((key: { status: HealthCheckResponse_ServingStatus }) => {
      built++;
      return create(HealthCheckResponseSchema, key);
    });
    const serving = { status: HealthCheckResponse_ServingStatus.SERVING };
    const first = responseFor(serving);
    expect(responseFor(serving)).toBe(first);
    expect(encodeResponse(HealthCheckResponseSchema, first)).toBe(encodeResponse(HealthCheckResponseSchema, first));
    const other = responseFor({ status: HealthCheckResponse_ServingStatus.NOT_SERVING });
    expect(other).not.toBe(first);
    expect(other.status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    expect(built).toBe(2);
  });

  describe("over kit's server", () => {
    let server: RunningServer;
    let current: HealthCheckResponse;
    beforeAll(async () => {
      current = reusableResponse(serving());
      server = await serveConnect({
        routes: (router) => router.service(Health, { check: async () => current, watch: async function* () {} }),
        interceptors: [],
        port: 0,
        host: "127.0.0.1",
      });
    });
    afterAll(() => server.close());

    it("answer every call with the same message, and a new one once the handler builds one", async () => {
      const client = createClient(Health, httpTransport(`http://127.0.0.1:${server.port}`));
      for (let i = 0; i < 3; i++) {
        expect((await client.check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      }
      current = reusableResponse(
        create(HealthCheckResponseSchema, { status: HealthCheckResponse_ServingStatus.NOT_SERVING }),
      );
      expect((await client.check({})).status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    });
  });
});
