import { describe, expect, it } from "vitest";
import { isPublicAddress } from "../../src/domain/address.js";
import { checkEndpoint } from "../../src/domain/endpoint.js";
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
    "not-an-ip",
  ])("refuses %s", (a) => expect(isPublicAddress(a)).toBe(false));

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"])("accepts %s", (a) =>
    expect(isPublicAddress(a)).toBe(true),
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
