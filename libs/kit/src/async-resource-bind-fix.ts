import { AsyncResource } from "node:async_hooks";

/**
 * Node 22 and 24 give every function `AsyncResource#bind` returns a deprecated `asyncResource`
 * accessor (DEP0172) with a fresh getter and setter, and `node:http2` binds one for every client
 * request (`ClientHttp2Session#request` binds its connect step to an `AsyncResource`). Whatever
 * V8 does with an accessor added anew to each function, the effect is measured: everything that
 * request can reach (the stream, its headers, the listeners, the caller's awaiting handler and
 * its HTTP request) survives the next scavenges and is promoted, freed only by a mark-compact.
 *
 * A bare HTTP/1 server making one `node:http2` call per request, at an even 1,000 req/s on
 * Node 22: 11.5–11.9 % of what it allocated was promoted, 4 mark-compacts in 10 s; with this,
 * 0.0 % and none, and scavenge pauses 72 → 32 ms in total. The bench's floor proxy (this
 * transport, the Redis hit, node:http): 11.6–11.9 % → 0.4 %, and no mark-compacts
 * (docs/benchmarks/rpc.md, "What a node:http2 request keeps alive"). The gateway still promotes
 * 12–14 % by another path, not found yet.
 *
 * This is `bind` as Node defines it, less that property, which is what Node's own removal of it
 * does (nodejs/node#58618, DEP0172 to end-of-life). A `bind` already replaced (an APM's) is left
 * alone. kit's unary transport imports this file, so a process that makes HTTP/2 calls has it.
 */
type Bind = (this: AsyncResource, fn: unknown, thisArg?: unknown) => unknown;
const nodeBind = AsyncResource.prototype.bind as unknown as Bind;

if (nodeBind.name === "bind") {
  AsyncResource.prototype.bind = function bind(this: AsyncResource, fn: unknown, thisArg?: unknown) {
    // Node's own argument check and error (ERR_INVALID_ARG_TYPE).
    if (typeof fn !== "function") return nodeBind.call(this, fn, thisArg);
    const resource = this;
    const bound =
      thisArg === undefined
        ? function (this: unknown, ...args: unknown[]) {
            return resource.runInAsyncScope(fn as (...a: unknown[]) => unknown, this, ...args);
          }
        : (resource.runInAsyncScope as (...args: unknown[]) => unknown).bind(resource, fn, thisArg);
    Object.defineProperty(bound, "length", {
      configurable: true,
      enumerable: false,
      value: fn.length,
      writable: false,
    });
    return bound;
  } as unknown as typeof AsyncResource.prototype.bind;
}
