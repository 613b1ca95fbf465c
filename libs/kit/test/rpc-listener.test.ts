import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { rpcListener } from "../src/rpc-listener.js";

// One port, both protocols: the connection's first bytes pick HTTP/2 (its preface) or HTTP/1.1.
let open: { server: net.Server; closeConnections(): void } | undefined;
let release: (() => void) | undefined;

async function listen(firstBytesTimeoutMs?: number): Promise<number> {
  open = rpcListener((req, res) => {
    const answer = () => {
      res.writeHead(200, { "content-type": "text/plain", "x-version": req.httpVersion });
      res.end(`${req.method} ${req.url}`);
    };
    if (req.url === "/slow") release = answer;
    else answer();
  }, firstBytesTimeoutMs);
  await new Promise<void>((resolve) => open!.server.listen(0, "127.0.0.1", resolve));
  return (open.server.address() as net.AddressInfo).port;
}

afterEach(async () => {
  if (!open) return;
  open.closeConnections();
  await new Promise((resolve) => open!.server.close(resolve));
  open = undefined;
});

function getH1(port: number, path: string, agent: http.Agent) {
  return new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, agent }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      })
      .on("error", reject);
  });
}

function getH2(session: http2.ClientHttp2Session, path: string) {
  return new Promise<{ status: number; body: string; version: string }>((resolve, reject) => {
    const s = session.request({ ":path": path });
    let status = 0;
    let version = "";
    let body = "";
    s.on("response", (h) => {
      status = Number(h[":status"]);
      version = String(h["x-version"]);
    });
    s.setEncoding("utf8");
    s.on("data", (c: string) => {
      body += c;
    });
    s.on("end", () => resolve({ status, body, version }));
    s.on("error", reject);
  });
}

describe("rpcListener", () => {
  it("answers HTTP/2 with prior knowledge and HTTP/1.1 keep-alive on the same port", async () => {
    const port = await listen();
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await getH2(session, "/a")).toEqual({ status: 200, body: "GET /a", version: "2.0" });
      const one = await getH1(port, "/b", agent);
      expect(one.status).toBe(200);
      expect(one.body).toBe("GET /b");
      expect(one.headers["x-version"]).toBe("1.1");
      // The second call reuses the first's connection.
      expect((await getH1(port, "/c", agent)).body).toBe("GET /c");
      expect(Object.values(agent.freeSockets).flat()).toHaveLength(1);
    } finally {
      session.close();
      agent.destroy();
    }
  });

  it("waits for the whole preface when it arrives in pieces", async () => {
    const port = await listen();
    const preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    const session = http2.connect(`http://127.0.0.1:${port}`, {
      createConnection: () => {
        const socket = net.connect(port, "127.0.0.1");
        // The client's own bytes go out after these, one byte each, so the server sees a partial preface first.
        const write = socket.write.bind(socket) as (chunk: Buffer, ...rest: unknown[]) => boolean;
        let sent = false;
        socket.write = ((chunk: Buffer, ...rest: unknown[]) => {
          if (!sent && Buffer.isBuffer(chunk) && chunk.subarray(0, preface.length).equals(preface)) {
            sent = true;
            for (const byte of chunk.subarray(0, 5)) write(Buffer.from([byte]));
            return write(chunk.subarray(5), ...rest);
          }
          return write(chunk, ...rest);
        }) as typeof socket.write;
        return socket;
      },
    });
    try {
      expect(await getH2(session, "/split")).toEqual({ status: 200, body: "GET /split", version: "2.0" });
    } finally {
      session.close();
    }
  });

  it("answers bytes that are neither protocol as HTTP/1.1 does: 400, then closes", async () => {
    const port = await listen();
    const reply = await new Promise<string>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.write("\x16\x03\x01 not http\r\n\r\n"));
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (c: string) => {
        text += c;
      });
      socket.on("close", () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
  });

  it("closes a connection that sends nothing, and only after the time it is given", async () => {
    const port = await listen(200);
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    socket.on("error", () => {});
    await new Promise((resolve) => socket.once("close", resolve));
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    // A connection that speaks in time stays open past it.
    const agent = new http.Agent({ keepAlive: true });
    try {
      await getH1(port, "/first", agent);
      const kept = Object.values(agent.freeSockets).flat()[0]!;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(kept.destroyed).toBe(false);
      expect((await getH1(port, "/second", agent)).body).toBe("GET /second");
    } finally {
      agent.destroy();
    }
  });

  it("on close, ends at once a connection that has sent nothing (kit's client keeps one after a cancelled call)", async () => {
    const port = await listen();
    const silent = net.connect(port, "127.0.0.1");
    silent.on("error", () => {});
    await new Promise((resolve) => silent.once("connect", resolve));
    // Let the server accept it before it closes.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const silentClosed = new Promise((resolve) => silent.once("close", resolve));
    open!.closeConnections();
    const started = Date.now();
    await new Promise((resolve) => open!.server.close(resolve));
    open = undefined;
    await silentClosed;
    // Not after the time a silent connection is given (72 s by default).
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("on close, ends idle HTTP/1.1 connections at once and a busy one after its answer", async () => {
    const port = await listen();
    const agent = new http.Agent({ keepAlive: true });
    const busyAgent = new http.Agent({ keepAlive: true });
    try {
      await getH1(port, "/warm", agent);
      const idle = Object.values(agent.freeSockets).flat()[0]!;
      const idleClosed = new Promise((resolve) => idle.once("close", resolve));
      const slow = getH1(port, "/slow", busyAgent);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(release).toBeTypeOf("function");
      open!.closeConnections();
      await idleClosed;
      release!();
      const answer = await slow;
      expect(answer.status).toBe(200);
      expect(answer.body).toBe("GET /slow");
      expect(answer.headers.connection).toBe("close");
      await new Promise((resolve) => open!.server.close(resolve));
      open = undefined;
    } finally {
      agent.destroy();
      busyAgent.destroy();
    }
  });
});
