/**
 * One side of the RPC benchmark (scripts/bench-rpc.ts), in a process of its own so that its
 * CPU is its own:
 *   server <connect|lean> <port>           serves OrganizationService.GetOrganization
 *   client <connect|lean|lean-h2> <port> <calls in flight> <seconds>
 * The client prints one JSON line: calls, seconds, its CPU ms; the server prints "ready".
 */
import http2 from "node:http2";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type ConnectRouter, createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { GetOrganizationResponseSchema, OrganizationService } from "@platform/contracts/identity";
import { httpTransport, serveConnect } from "@platform/kit/connect";

const [role, mode, portArg, inFlightArg, secondsArg] = process.argv.slice(2);
const port = Number(portArg);

if (role === "server") {
  // The answer identity gives for /organizations/me, from memory: the RPC path alone.
  const answer = create(GetOrganizationResponseSchema, {
    organization: { id: "org_01JBENCH0000000000000000000", name: "Acme Inc", createdAt: timestampFromDate(new Date()) },
  });
  const routes = (router: ConnectRouter) =>
    router.service(OrganizationService, { getOrganization: async () => answer });
  if (mode === "lean") await serveConnect({ routes, interceptors: [], port, host: "127.0.0.1" });
  else {
    const server = http2.createServer(connectNodeAdapter({ routes }));
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  }
  console.log("ready");
} else {
  const baseUrl = `http://127.0.0.1:${port}`;
  const transport =
    mode === "lean"
      ? httpTransport(baseUrl)
      : mode === "lean-h2"
        ? httpTransport(baseUrl, [], { unaryHttpVersion: "2" })
        : createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, acceptCompression: [] });
  const client = createClient(OrganizationService, transport);
  // A signed request context is about 300 characters; the call carries one like it.
  const headers = { "x-platform-context": "x".repeat(300), "x-platform-org-id": "org_01JBENCH0000000000000000000" };
  const call = () => client.getOrganization({}, { headers });
  for (let i = 0; i < 300; i++) await call();
  let calls = 0;
  let stop = false;
  const worker = async () => {
    while (!stop) {
      await call();
      calls++;
    }
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  setTimeout(() => {
    stop = true;
  }, Number(secondsArg) * 1000);
  await Promise.all(Array.from({ length: Number(inFlightArg) }, worker));
  const used = process.cpuUsage(cpu);
  console.log(
    JSON.stringify({ calls, seconds: (performance.now() - started) / 1000, cpuMs: (used.user + used.system) / 1000 }),
  );
  process.exit(0);
}
