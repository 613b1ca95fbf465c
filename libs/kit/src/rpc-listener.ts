import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { NodeHandler } from "./unary-handler.js";

/**
 * How long an idle HTTP/1.1 connection stays open: longer than any caller keeps one idle
 * (`unary-transport.ts` drops its idle sockets after 60 s), so a caller never sends on a
 * socket the server is closing. 72 s, as fastify's default for the gateway.
 */
export const IDLE_KEEP_ALIVE_MS = 72_000;

/**
 * A connection that has sent nothing for this long is closed: neither server has it yet, so
 * neither's own timeouts would. As long as an idle keep-alive one, because it may be one: kit's
 * client (undici) connects again after a call it cancelled and keeps that connection, unused,
 * for the next call (`unary-transport.ts` drops it after 60 s, as any idle one).
 */
export const FIRST_BYTES_TIMEOUT_MS = IDLE_KEEP_ALIVE_MS;

/** The first bytes every HTTP/2 client sends on a cleartext connection (RFC 9113 §3.4). */
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * One port that speaks both HTTP/2 cleartext (h2c, with prior knowledge) and HTTP/1.1, the
 * connection's first bytes telling which: Node's cleartext HTTP/2 server refuses HTTP/1.1 and
 * has no option to accept it (`allowHTTP1` needs TLS's ALPN), the way nodejs/node#44887 shows.
 *
 * Why both: unary calls between this project's processes travel over HTTP/1.1 keep-alive and
 * streaming calls over HTTP/2 (docs/benchmarks/rpc.md, "Unary calls over HTTP/1.1").
 */
export function rpcListener(
  handler: NodeHandler,
  /** How long a new connection may stay silent before it is closed. */
  firstBytesTimeoutMs = FIRST_BYTES_TIMEOUT_MS,
): {
  server: net.Server;
  /** Ends idle connections now and in-flight ones when their answer is sent. */
  closeConnections(): void;
} {
  const h2 = http2.createServer(handler as never);
  const h1 = http.createServer({ keepAliveTimeout: IDLE_KEEP_ALIVE_MS }, handler as never);
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  // Node tracks an HTTP/1.1 server's connections only once it listens itself; this one is
  // handed its connections, so it tracks them here, with the answer each is busy with.
  const h1Sockets = new Set<net.Socket>();
  const busy = new Map<net.Socket, http.ServerResponse>();
  // Connections whose first bytes have not come yet: nothing runs on them.
  const undecided = new Set<net.Socket>();
  let closing = false;
  h1.on("request", (_req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = res.socket;
    if (!socket) return;
    if (closing) res.shouldKeepAlive = false;
    busy.set(socket, res);
    res.once("close", () => {
      busy.delete(socket);
      if (closing) socket.destroy();
    });
  });
  const server = net.createServer((socket) => {
    let seen: Buffer = Buffer.alloc(0);
    const onSilent = () => socket.destroy();
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      // Undecided until the bytes seen differ from the preface or hold all of it.
      if (isH2 && n < PREFACE.length) return;
      socket.off("data", onData);
      undecided.delete(socket);
      // The chosen server's own timeouts apply from here (HTTP/1.1's keep-alive uses the socket's).
      socket.off("timeout", onSilent);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(seen);
      if (isH2) h2.emit("connection", socket);
      else {
        h1Sockets.add(socket);
        socket.once("close", () => h1Sockets.delete(socket));
        h1.emit("connection", socket);
        socket.resume();
      }
    };
    if (closing) return void socket.destroy();
    undecided.add(socket);
    socket.once("close", () => undecided.delete(socket));
    socket.on("data", onData);
    socket.setTimeout(firstBytesTimeoutMs);
    socket.on("timeout", onSilent);
    socket.on("error", () => socket.destroy());
  });
  return {
    server,
    closeConnections() {
      for (const s of sessions) s.close();
      closing = true;
      // A connection that has sent nothing yet has no call on it.
      for (const socket of undecided) socket.destroy();
      // An idle connection ends now; a busy one after its answer, which says `connection: close`.
      // Destroyed, not ended, as Node's closeIdleConnections does: an ended socket still reads,
      // so a call sent as it closes would run with nobody to answer; a destroyed one reads no
      // more, and its caller sees the connection reset before anything ran.
      for (const socket of h1Sockets) {
        const res = busy.get(socket);
        if (res === undefined) socket.destroy();
        else if (!res.headersSent) res.shouldKeepAlive = false;
      }
    },
  };
}
