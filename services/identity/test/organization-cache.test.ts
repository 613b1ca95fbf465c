import { ManualClock } from "@platform/kit/clock";
import { describe, expect, it } from "vitest";
import { organizationCache } from "../src/application/organization-cache.js";
import type { OrganizationView } from "../src/store/index.js";

const org = (name: string) => ({ id: "org_x", name }) as unknown as OrganizationView;

function counting(names: string[]) {
  let reads = 0;
  return {
    reads: () => reads,
    findOrganization: async () => org(names[reads++] ?? "?"),
  };
}

describe("organization cache", () => {
  it("reuses a read within its lifetime, and reads again after it or after a committed write", async () => {
    const clock = new ManualClock("2026-03-02T10:00:00Z");
    const store = counting(["A", "B", "C"]);
    const cache = organizationCache(store, clock, 1000);
    expect((await cache.findOrganization("org_x"))?.name).toBe("A");
    expect((await cache.findOrganization("org_x"))?.name).toBe("A");
    clock.advance(1000);
    expect((await cache.findOrganization("org_x"))?.name).toBe("B");
    cache.clear();
    expect((await cache.findOrganization("org_x"))?.name).toBe("C");
    expect(store.reads()).toBe(3);
  });

  it("never keeps a read that started before a write committed", async () => {
    const clock = new ManualClock("2026-03-02T10:00:00Z");
    let release: (v: OrganizationView) => void = () => {};
    let reads = 0;
    const cache = organizationCache(
      {
        findOrganization: () => {
          reads++;
          return reads === 1 ? new Promise<OrganizationView>((r) => (release = r)) : Promise.resolve(org("new"));
        },
      },
      clock,
      1000,
    );
    const stale = cache.findOrganization("org_x");
    cache.clear();
    release(org("old"));
    expect((await stale)?.name).toBe("old");
    expect((await cache.findOrganization("org_x"))?.name).toBe("new");
  });

  it("keeps nothing with a lifetime of 0", async () => {
    const store = counting(["A", "B"]);
    const cache = organizationCache(store, new ManualClock("2026-03-02T10:00:00Z"), 0);
    await cache.findOrganization("org_x");
    expect((await cache.findOrganization("org_x"))?.name).toBe("B");
  });
});
