/**
 * The headers of one unary call, as the Fetch API's `Headers` behaves for what a call carries:
 * names case-insensitive, `append` joins values with ", ", iteration sorted by name.
 *
 * Why not `Headers`: Node's (undici's) checks every name and value through WebIDL conversions
 * on each `set`, `append` and construction. The headers of one proxied read (the request's,
 * then the response's and its trailers) cost the gateway about 6 µs of CPU that way, against
 * about 1 µs here (docs/benchmarks/gateway.md, "The gateway near the floor"). Nothing is
 * checked here because nothing needs to be: undici checks what a call sends, and what a call
 * receives was parsed by Node's or undici's HTTP parser.
 */
/** What `new Headers(init)` takes. */
export type HeadersInit = ConstructorParameters<typeof Headers>[0];

export class CallHeaders implements Headers {
  readonly #values = new Map<string, string>();

  /** The headers a caller gave (a `Headers`, pairs or a record), as `new Headers(init)` reads them. */
  constructor(init?: HeadersInit) {
    if (init === undefined) return;
    if (Array.isArray(init)) {
      for (const [name, value] of init as [string, string][]) this.append(name, value);
    } else if (typeof (init as Headers).forEach === "function") {
      (init as Headers).forEach((value, name) => {
        this.append(name, value);
      });
    } else {
      const record = init as Record<string, string | readonly string[]>;
      for (const name in record) {
        const value = record[name] as string | readonly string[];
        if (typeof value === "string") this.append(name, value);
        else for (const v of value) this.append(name, v);
      }
    }
  }

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const before = this.#values.get(key);
    this.#values.set(key, before === undefined ? String(value) : `${before}, ${value}`);
  }

  delete(name: string): void {
    this.#values.delete(name.toLowerCase());
  }

  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null;
  }

  getSetCookie(): string[] {
    const value = this.#values.get("set-cookie");
    return value === undefined ? [] : [value];
  }

  has(name: string): boolean {
    return this.#values.has(name.toLowerCase());
  }

  set(name: string, value: string): void {
    this.#values.set(name.toLowerCase(), String(value));
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  /** name, value, name, value… in insertion order: what an HTTP client sends, without sorting. */
  flat(): string[] {
    const out: string[] = [];
    for (const [name, value] of this.#values) out.push(name, value);
    return out;
  }

  *entries(): Generator<[string, string], undefined> {
    yield* [...this.#values].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  *keys(): Generator<string, undefined> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): Generator<string, undefined> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): Generator<[string, string], undefined> {
    return this.entries();
  }
}
