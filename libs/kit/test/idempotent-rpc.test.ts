import { create, type MessageShape } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
  type HealthCheckResponseSchema,
} from "@platform/contracts/health";
import { beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { requestContextKey } from "../src/connect.js";
import { IDEMPOTENT_REPLAY_HEADER } from "../src/context.js";
import type { Db } from "../src/db.js";
import { runIdempotent, runIdempotentStatement } from "../src/idempotency.js";
import { idempotentRpc } from "../src/idempotent-rpc.js";
import { freshKitDbEachTest } from "./helpers.js";

// What a write RPC answers: the message it wrote the first time, the stored JSON parsed back on a
// replay. Health's Check stands in for a write: any request and response schema serve.
let db: Db;
const clock = new ManualClock();
freshKitDbEachTest((fresh) => {
  db = fresh;
});

const method = Health.method.check;
const request = { schema: method.input, message: create(HealthCheckRequestSchema, { service: "things" }) };
type Response = MessageShape<typeof HealthCheckResponseSchema>;

function handlerContext(idempotencyKey: string) {
  return createHandlerContext({
    service: Health,
    method,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/grpc.health.v1.Health/Check",
    contextValues: createContextValues().set(requestContextKey, {
      principal: "api",
      requestId: "req_1",
      orgId: "org_1",
      tokenId: "tok_1",
      scopes: [],
      idempotencyKey,
    }),
  });
}

describe.each([
  ["runIdempotent", runIdempotent],
  ["runIdempotentStatement", runIdempotentStatement],
])("idempotentRpc over %s", (_name, run) => {
  let calls: number;
  beforeEach(() => {
    calls = 0;
  });
  // Each call writes something else: a replay must answer what the first call wrote.
  const write = async (): Promise<Response> =>
    create(method.output, {
      status: ++calls === 1 ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING,
    });

  it("answers the first request with the message it wrote, and a replay with the stored one", async () => {
    const first = handlerContext("key-1");
    let written: Response | undefined;
    const answered = await idempotentRpc(
      { db, clock },
      first,
      request,
      method.output,
      async () => {
        written = await write();
        return written;
      },
      run,
    );
    expect(answered).toBe(written);
    expect(first.responseHeader.get(IDEMPOTENT_REPLAY_HEADER)).toBeNull();

    const again = handlerContext("key-1");
    const replayed = await idempotentRpc({ db, clock }, again, request, method.output, write, run);
    expect(replayed).not.toBe(written);
    expect(replayed).toEqual(written);
    expect(again.responseHeader.get(IDEMPOTENT_REPLAY_HEADER)).toBe("true");
  });
});
