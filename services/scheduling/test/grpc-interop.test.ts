import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { systemClock } from "@platform/kit/clock";
import { CONTEXT_HEADER, signContext } from "@platform/kit/context";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { sandboxOrgId, sandboxScheduleId } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSchedulingConfig } from "../src/config.js";
import { start } from "../src/start.js";
import { SCOPES, silentLogger } from "./builders.js";

// A plain gRPC client (@grpc/grpc-js with the .proto files loaded at run time, no Connect and
// no generated code of ours) against the service process's HTTP/2 server: the health check
// kubelet probes call, and one API call carrying the signed context as gRPC metadata.

const PROTO_ROOT = fileURLToPath(new URL("../../../proto", import.meta.url));
const SEED = "grpc-interop";

type Unary = (req: object, meta: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;
type Client = grpc.Client & Record<string, Unary>;

function clientOf(file: string, service: string, port: number): Client {
  const definition = protoLoader.loadSync(file, {
    includeDirs: [PROTO_ROOT],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
  });
  const pkg = grpc.loadPackageDefinition(definition);
  const Ctor = service.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], pkg) as new (
    address: string,
    credentials: grpc.ChannelCredentials,
  ) => Client;
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

function call(client: Client, method: string, req: object, meta = new grpc.Metadata()): Promise<unknown> {
  return new Promise((resolve, reject) => {
    client[method]?.call(client, req, meta, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

let running: Awaited<ReturnType<typeof start>>;
let closeDb: () => Promise<void>;
const config = loadSchedulingConfig({ PORT: "0", SANDBOX_SEED: SEED });

beforeAll(async () => {
  const pglite = await openPglite();
  closeDb = () => pglite.close();
  running = await start(config, { db: pgliteDb(pglite, "scheduling"), logger: silentLogger });
});
afterAll(async () => {
  await running?.stop();
  await closeDb();
});

describe("gRPC interoperability", () => {
  it("answers the standard health check, for the server and by its own name, and NOT_FOUND for others", async () => {
    const health = clientOf("grpc/health/v1/health.proto", "grpc.health.v1.Health", running?.port ?? 0);
    try {
      expect(await call(health, "Check", { service: "" })).toEqual({ status: "SERVING" });
      expect(await call(health, "Check", { service: "scheduling" })).toEqual({ status: "SERVING" });
      await expect(call(health, "Check", { service: "billing" })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
      });
    } finally {
      health.close();
    }
  });

  it("serves an API call over gRPC with the signed context in the metadata, and refuses one without", async () => {
    const api = clientOf(
      "platform/scheduling/v1/smart_schedule.proto",
      "platform.scheduling.v1.SmartScheduleService",
      running?.port ?? 0,
    );
    try {
      const meta = new grpc.Metadata();
      const orgId = sandboxOrgId(SEED, "acme");
      meta.set(
        CONTEXT_HEADER,
        signContext(
          { principal: "api", requestId: "req_grpc", orgId, tokenId: "tok_grpc", scopes: SCOPES },
          config.PLATFORM_CONTEXT_SECRET,
          systemClock,
        ),
      );
      const res = (await call(api, "ListSmartSchedules", { sort: "name" }, meta)) as {
        schedules: { id: string; name: string; status: string }[];
      };
      expect(res.schedules.map((s) => s.name)).toEqual(["Enterprise demo", "Intro call"]);
      expect(res.schedules.map((s) => s.id)).toEqual([
        sandboxScheduleId(SEED, "acme-demo"),
        sandboxScheduleId(SEED, "acme-intro"),
      ]);

      await expect(call(api, "ListSmartSchedules", {})).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    } finally {
      api.close();
    }
  });
});
