import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Received } from "./builders.js";

/** A throwaway CA and a server certificate it signed, for 127.0.0.1 and localhost. */
export function testCertificates(): { dir: string; caFile: string; key: string; cert: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "webhooks-it-"));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=webhooks-it-ca",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.pem"),
  );
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    file("server.key"),
    "-out",
    file("server.csr"),
  );
  writeFileSync(file("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl(
    "x509",
    "-req",
    "-in",
    file("server.csr"),
    "-CA",
    file("ca.pem"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    file("san.ext"),
    "-out",
    file("server.pem"),
  );
  return {
    dir,
    caFile: file("ca.pem"),
    key: readFileSync(file("server.key"), "utf8"),
    cert: readFileSync(file("server.pem"), "utf8"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** An HTTPS endpoint recording every POST; answers 200 after `delayMs` (settable). */
export async function startHttpsReceiver(tls: { key: string; cert: string }) {
  const received: Received[] = [];
  const state = { delayMs: 0 };
  const server = createServer(tls, (req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      received.push({ headers: req.headers, body, path: req.url ?? "" });
      setTimeout(() => {
        res.writeHead(200);
        res.end("ok");
      }, state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    received,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
