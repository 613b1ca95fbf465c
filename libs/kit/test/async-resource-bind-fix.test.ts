import { AsyncLocalStorage, AsyncResource, executionAsyncId } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import "../src/async-resource-bind-fix.js";

describe("AsyncResource#bind without the deprecated asyncResource property", () => {
  it("is installed", () => {
    const bound = new AsyncResource("test").bind(() => 1);
    expect(Object.hasOwn(bound, "asyncResource")).toBe(false);
  });

  it("runs the function in the resource's scope, with the caller's this and arguments, and its length", () => {
    const resource = new AsyncResource("test");
    const self = { name: "receiver" };
    const bound = resource.bind(function (this: unknown, a: number, b: number) {
      return { id: executionAsyncId(), self: this, sum: a + b };
    });
    expect(bound.length).toBe(2);
    expect(bound.call(self, 2, 3)).toEqual({ id: resource.asyncId(), self, sum: 5 });
  });

  it("binds this when given thisArg, as Node's does", () => {
    const resource = new AsyncResource("test");
    const self = { name: "bound" };
    // Node takes a thisArg; @types/node's signature leaves it out.
    const bindTo = resource.bind as unknown as (fn: (a: number) => unknown, thisArg: unknown) => (a: number) => unknown;
    const bound = bindTo.call(
      resource,
      function (this: unknown, a: number) {
        return { id: executionAsyncId(), self: this, a };
      },
      self,
    );
    expect(bound.length).toBe(1);
    expect(bound.call({ other: true }, 7)).toEqual({ id: resource.asyncId(), self, a: 7 });
  });

  it("keeps the AsyncLocalStorage store of where the resource was made, also through the static bind", () => {
    const storage = new AsyncLocalStorage<string>();
    const [viaInstance, viaStatic] = storage.run("at creation", () => [
      new AsyncResource("test").bind(() => storage.getStore()),
      AsyncResource.bind(() => storage.getStore()),
    ]);
    storage.run("at the call", () => {
      expect(viaInstance()).toBe("at creation");
      expect(viaStatic()).toBe("at creation");
    });
  });

  it("refuses what is not a function with Node's own error", () => {
    expect(() => new AsyncResource("test").bind(42 as unknown as () => void)).toThrow(
      expect.objectContaining({ code: "ERR_INVALID_ARG_TYPE" }),
    );
  });
});
