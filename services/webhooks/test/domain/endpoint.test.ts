import { describe, expect, it } from "vitest";
import { isPublicAddress } from "../../src/domain/address.js";
import { checkEndpoint, endpointOrigin } from "../../src/domain/endpoint.js";
import { fakeResolver } from "../builders.js";

const policy = {
  allowPrivateTargets: false,
  resolve: fakeResolver({
    "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "rebind.example.com": ["93.184.216.34", "127.0.0.1"],
    "internal.example.com": ["10.1.2.3"],
    "v6local.example.com": ["fd12::1"],
  }),
};

describe("isPublicAddress", () => {
  it.each([
    "127.0.0.1",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.254",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "::1",
    "::",
    "fc00::1",
    "fd00::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "64:ff9b::7f00:1",
    // IPv4-compatible (::/96): refused whatever it embeds, in either spelling.
    "::7f00:1",
    "::127.0.0.1",
    "::a00:1",
    "::808:808",
    "::8.8.8.8",
    // NAT64, 6to4 and Teredo: refused even when the embedded IPv4 address is public.
    "64:ff9b::808:808",
    "64:ff9b:1::808:808",
    "2002:7f00:1::",
    "2002:808:808::",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    // Outside global unicast (2000::/3), and the old site-local range.
    "4000::1",
    "fec0::1",
    "not-an-ip",
  ])("refuses %s", (a) => expect(isPublicAddress(a)).toBe(false));

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8"])(
    "accepts %s",
    (a) => expect(isPublicAddress(a)).toBe(true),
  );
});

describe("checkEndpoint", () => {
  it.each([
    ["http://hooks.example.com/x", "HTTPS"],
    ["ftp://hooks.example.com/x", "HTTPS"],
    ["not a url", "absolute"],
    ["https://user:pw@hooks.example.com/", "credentials"],
    ["https://localhost/hook", "localhost"],
    ["https://api.localhost/hook", "localhost"],
    ["https://127.0.0.1/hook", "private"],
    ["https://10.0.0.8/hook", "private"],
    ["https://172.16.4.4/hook", "private"],
    ["https://192.168.0.10/hook", "private"],
    ["https://169.254.169.254/latest/meta-data", "private"],
    ["https://[::1]/hook", "private"],
    ["https://[fc00::1]/hook", "private"],
    ["https://[fe80::1]/hook", "private"],
    ["https://[::ffff:127.0.0.1]/hook", "private"],
    ["https://[::127.0.0.1]/hook", "private"],
    ["https://[::7f00:1]/hook", "private"],
    ["https://2130706433/hook", "private"],
    ["https://internal.example.com/hook", "private"],
    ["https://v6local.example.com/hook", "private"],
    ["https://rebind.example.com/hook", "private"],
    ["https://nowhere.example.com/hook", "does not resolve"],
    [`https://hooks.example.com/${"a".repeat(2100)}`, "2048"],
  ])("refuses %s", async (url, why) => {
    const checked = await checkEndpoint(url, policy);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toContain(why);
  });

  it("accepts an HTTPS URL of a public host, by name or address", async () => {
    expect(await checkEndpoint("https://hooks.example.com/platform?x=1", policy)).toEqual({
      ok: true,
      url: "https://hooks.example.com/platform?x=1",
    });
    expect((await checkEndpoint("https://93.184.216.34/hook", policy)).ok).toBe(true);
  });

  it("admits private targets and plain http only with the explicit setting", async () => {
    const dev = { ...policy, allowPrivateTargets: true };
    expect((await checkEndpoint("http://127.0.0.1:8080/hook", dev)).ok).toBe(true);
    expect((await checkEndpoint("https://localhost/hook", dev)).ok).toBe(true);
    expect((await checkEndpoint("ftp://localhost/hook", dev)).ok).toBe(false);
  });
});

describe("endpointOrigin", () => {
  it("is scheme://host:port, lower case with the port explicit, whatever the path", () => {
    expect(endpointOrigin("https://Hooks.Example.com/a?x=1")).toBe("https://hooks.example.com:443");
    expect(endpointOrigin("https://hooks.example.com.:443/b")).toBe("https://hooks.example.com:443");
    expect(endpointOrigin("https://hooks.example.com:8443/c")).toBe("https://hooks.example.com:8443");
    expect(endpointOrigin("http://127.0.0.1:8080/hooks/3")).toBe("http://127.0.0.1:8080");
    expect(endpointOrigin("https://[0:0::1]/x")).toBe("https://[::1]:443");
  });
});
