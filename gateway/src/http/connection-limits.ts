import type { Server } from "node:http";
import type { Socket } from "node:net";

/** The edge's connection settings (gateway config). */
export interface ConnectionLimits {
  /** Open connections at once (server.maxConnections); past it Node closes new ones unanswered. */
  maxConnections: number;
  /** Connections one address may hold before any of its requests carried a valid key; 0: no cap. */
  keylessPerAddress: number;
}

/**
 * How long a connection closed after an early answer (401 before the body, 413, 408) keeps
 * discarding what the client still sends before it is destroyed.
 */
export const LINGER_MS = 2_000;

/** Node ends a `Connection: close` response with this (http server's resOnFinish). */
type Lingering = Socket & { destroySoon(): void };

/**
 * Lingering close, as nginx's `lingering_close`: Node ends a `Connection: close` response with
 * `socket.destroySoon()`, which destroys the socket as soon as the answer is written. A client
 * still sending its body (a 413, a 401 before the body) then meets a closed socket, the kernel
 * answers its bytes with a reset, and the client reports ECONNRESET instead of reading the
 * answer. Here the socket sends its FIN after the answer, the rest of the body is discarded
 * (Node dumps an unread request) without being buffered, and the socket is destroyed when the
 * client closes its side or after LINGER_MS, whichever comes first.
 */
function lingerBeforeDestroy(this: Lingering): void {
  if (this.destroyed) return;
  this.end();
  const timer = setTimeout(() => this.destroy(), UNHEARD.has(this) ? UNHEARD_LINGER_MS : LINGER_MS);
  timer.unref();
  this.once("close", () => clearTimeout(timer));
}

/**
 * The lingering close of a request refused on its headers (no valid key, over a rate limit): long
 * enough for the answer and the FIN to reach the client before the socket goes (closing a socket
 * with unread bytes makes the kernel reset it and drop what it had not yet sent: measured, 5–16
 * of 400 stalled keyless uploads then never got their 401), short, so a client that keeps
 * sending is not drained for long.
 */
export const UNHEARD_LINGER_MS = 500;

/** Connections whose client is not heard out, see `closeUnheard`. */
const UNHEARD = new WeakSet<Socket>();

/**
 * The connection lingers only UNHEARD_LINGER_MS after its answer: for requests that were not
 * admitted (no valid key, over a rate limit), whose uploads the gateway owes nothing.
 */
export function closeUnheard(socket: Socket | null | undefined): void {
  if (socket) UNHEARD.add(socket);
}

/**
 * Counts, per client address, the connections that have not yet carried a request with a valid
 * API key. A connection accepted past the cap is marked: its requests without a key are refused
 * (429) and it is closed, so one address cannot hold hundreds of sockets open without a key.
 */
export class KeylessConnections {
  readonly #perAddress = new Map<string, number>();
  /** Sockets counted above (until they close or carry a valid key). */
  readonly #counted = new WeakMap<Socket, string>();
  readonly #overCap = new WeakSet<Socket>();

  constructor(readonly cap: number) {}

  /** A connection was accepted. */
  accepted(socket: Socket): void {
    if (this.cap === 0) return;
    const address = socket.remoteAddress ?? "";
    const count = this.#perAddress.get(address) ?? 0;
    if (count >= this.cap) {
      this.#overCap.add(socket);
      return;
    }
    this.#perAddress.set(address, count + 1);
    this.#counted.set(socket, address);
    socket.once("close", () => this.#uncount(socket));
  }

  /** A request on this connection carried a valid API key: it no longer counts as keyless. */
  keyed(socket: Socket | undefined): void {
    if (socket) this.#uncount(socket);
  }

  /** True for a connection accepted while its address already held `cap` keyless ones. */
  isOverCap(socket: Socket | undefined): boolean {
    return socket !== undefined && this.#overCap.has(socket);
  }

  /** Open keyless connections of an address (tests, metrics). */
  count(address: string): number {
    return this.#perAddress.get(address) ?? 0;
  }

  #uncount(socket: Socket): void {
    const address = this.#counted.get(socket);
    if (address === undefined) return;
    this.#counted.delete(socket);
    const left = (this.#perAddress.get(address) ?? 1) - 1;
    if (left <= 0) this.#perAddress.delete(address);
    else this.#perAddress.set(address, left);
  }
}

/**
 * Applies the connection limits to the gateway's HTTP server: the overall bound, lingering close
 * on every connection, and the keyless count per address. Returns the count, which the
 * authentication marks connections in.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): KeylessConnections {
  server.maxConnections = limits.maxConnections;
  const keyless = new KeylessConnections(limits.keylessPerAddress);
  server.on("connection", (socket: Socket) => {
    (socket as Lingering).destroySoon = lingerBeforeDestroy;
    keyless.accepted(socket);
  });
  return keyless;
}
