// A raw HTTP/1.1 client over node:net, for tests that must see exactly when an answer comes,
// what the client could read of it, and how the connection ended (FIN or reset).
import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: string;
}

/** One connection: what it received, when, and how it ended. */
export class RawConnection {
  readonly socket: Socket;
  #received = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  /** Set when the connection ended: "end" (the server closed it cleanly) or the error's code. */
  ending: string | undefined;
  readonly ended: Promise<string>;
  readonly connected: Promise<void>;

  constructor(port: number) {
    // Half-open allowed: after the server's FIN the client can go on writing, as one still
    // sending its body does, until the server closes the socket.
    this.socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    this.connected = new Promise((resolve) => this.socket.once("connect", () => resolve()));
    this.socket.on("data", (chunk: Buffer) => {
      this.#received = Buffer.concat([this.#received, chunk]);
      this.#wake();
    });
    this.ended = new Promise((resolve) => {
      this.socket.once("end", () => {
        this.ending ??= "end";
        resolve(this.ending);
        this.#wake();
      });
      this.socket.once("error", (err: NodeJS.ErrnoException) => {
        this.ending ??= err.code ?? err.message;
        resolve(this.ending);
        this.#wake();
      });
      this.socket.once("close", () => {
        this.ending ??= "close";
        resolve(this.ending);
        this.#wake();
      });
    });
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Writes, resolving once the bytes were handed to the kernel; a failed write resolves with its error code. */
  write(data: string | Buffer): Promise<string | undefined> {
    return new Promise((resolve) => {
      this.socket.write(data, (err) => resolve(err ? ((err as NodeJS.ErrnoException).code ?? err.message) : undefined));
    });
  }

  /** The first complete response on the connection; rejects when it closes before one arrived. */
  async response(timeoutMs = 5_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseResponse(this.#received);
      if (parsed) return parsed;
      if (this.ending !== undefined) {
        throw new Error(`connection ended (${this.ending}) before a response: ${this.#received.toString()}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** True while nothing has been received. */
  get silent(): boolean {
    return this.#received.length === 0;
  }

  close(): void {
    this.socket.destroy();
  }
}

function parseResponse(data: Buffer): RawResponse | undefined {
  const headEnd = data.indexOf("\r\n\r\n");
  if (headEnd < 0) return undefined;
  const [statusLine, ...lines] = data.subarray(0, headEnd).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers["content-length"] ?? 0);
  const body = data.subarray(headEnd + 4);
  if (body.length < length) return undefined;
  return { status: Number(statusLine!.split(" ")[1]), headers, body: body.subarray(0, length).toString("utf8") };
}

/** The head of a request: request line and headers, ending with the blank line. */
export function head(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries({ host: "127.0.0.1", ...headers }).map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`;
}
