import { describe, expect, it } from "vitest";
import { CallHeaders } from "../src/call-headers.js";

/** The same steps on a Fetch API `Headers` and on `CallHeaders`; their observable state after each. */
function both(init: ConstructorParameters<typeof Headers>[0], steps: ((h: Headers) => void)[]) {
  const fetchHeaders = new Headers(init);
  const call = new CallHeaders(init);
  for (const step of steps) {
    step(fetchHeaders);
    step(call);
    expect([...call]).toEqual([...fetchHeaders]);
  }
  return { fetchHeaders, call };
}

describe("CallHeaders", () => {
  it("reads, sets, appends and deletes as the Fetch API's Headers does, names in any case", () => {
    const { fetchHeaders, call } = both({ "Platform-Context": "ctx", "x-platform-org-id": "org_1" }, [
      (h) => h.set("Connect-Timeout-Ms", "5000"),
      (h) => h.append("accept", "a"),
      (h) => h.append("ACCEPT", "b"),
      (h) => h.set("content-type", "application/proto"),
      (h) => h.delete("X-Platform-Org-Id"),
      (h) => h.set("connect-timeout-ms", "4000"),
    ]);
    for (const name of ["platform-context", "ACCEPT", "connect-timeout-ms", "x-platform-org-id", "missing"]) {
      expect(call.get(name)).toBe(fetchHeaders.get(name));
      expect(call.has(name)).toBe(fetchHeaders.has(name));
    }
    expect([...call.keys()]).toEqual([...fetchHeaders.keys()]);
    expect([...call.values()]).toEqual([...fetchHeaders.values()]);
    const seen: string[] = [];
    call.forEach((value, name) => {
      seen.push(`${name}=${value}`);
    });
    expect(seen).toEqual([
      "accept=a, b",
      "connect-timeout-ms=4000",
      "content-type=application/proto",
      "platform-context=ctx",
    ]);
  });

  it("takes pairs, a record or another Headers, and a Headers can be made from it", () => {
    both(
      [
        ["b", "2"],
        ["A", "1"],
        ["a", "3"],
      ],
      [],
    );
    both(new Headers({ z: "26", y: "25" }), []);
    const call = new CallHeaders({ "Content-Type": "application/proto", "trailer-x": "t" });
    expect([...new Headers(call)]).toEqual([
      ["content-type", "application/proto"],
      ["trailer-x", "t"],
    ]);
    expect(call.getSetCookie()).toEqual([]);
  });

  it("gives an HTTP client its pairs flat, in the order they were set", () => {
    const call = new CallHeaders({ "platform-context": "ctx" });
    call.set("connect-timeout-ms", "5000");
    call.set("Content-Type", "application/proto");
    expect(call.flat()).toEqual([
      "platform-context",
      "ctx",
      "connect-timeout-ms",
      "5000",
      "content-type",
      "application/proto",
    ]);
  });
});
