import { describe, expect, it } from "vitest";
import type { Routing } from "../../src/domain/model.js";
import { routeHosts } from "../../src/domain/routing.js";

const routing: Routing = {
  rules: [
    {
      when: [
        { fieldKey: "region", anyOf: ["EMEA"] },
        { fieldKey: "size", anyOf: ["enterprise"] },
      ],
      hostGroups: [["usr_e1"]],
    },
    { when: [{ fieldKey: "region", anyOf: ["EMEA", "APAC"] }], hostGroups: [["usr_a", "usr_b"], ["usr_c"]] },
    { when: [{ fieldKey: "products", anyOf: ["voice"] }], hostGroups: [["usr_voice"]] },
    { when: [{ fieldKey: "existing", anyOf: ["true"] }], hostGroups: [["usr_am"]] },
    { when: [{ fieldKey: "seats", anyOf: ["100"] }], hostGroups: [["usr_big"]] },
  ],
  fallback: [["usr_f1"], ["usr_f2"]],
};

describe("routeHosts", () => {
  it("takes the first rule whose conditions all match", () => {
    expect(routeHosts(routing, { region: "EMEA", size: "enterprise" })).toEqual([["usr_e1"]]);
    expect(routeHosts(routing, { region: "EMEA", size: "smb" })).toEqual([["usr_a", "usr_b"], ["usr_c"]]);
    expect(routeHosts(routing, { region: "APAC", products: ["voice"] })).toEqual([["usr_a", "usr_b"], ["usr_c"]]);
  });

  it("falls back when no rule matches, including when the field is missing", () => {
    expect(routeHosts(routing, { region: "AMER" })).toEqual([["usr_f1"], ["usr_f2"]]);
    expect(routeHosts(routing, {})).toEqual([["usr_f1"], ["usr_f2"]]);
  });

  it("matches an array answer when any element is listed", () => {
    expect(routeHosts(routing, { products: ["crm", "voice"] })).toEqual([["usr_voice"]]);
    expect(routeHosts(routing, { products: ["crm"] })).toEqual([["usr_f1"], ["usr_f2"]]);
    expect(routeHosts(routing, { products: [] })).toEqual([["usr_f1"], ["usr_f2"]]);
  });

  it("compares booleans and numbers by their string form", () => {
    expect(routeHosts(routing, { existing: true })).toEqual([["usr_am"]]);
    expect(routeHosts(routing, { existing: false })).toEqual([["usr_f1"], ["usr_f2"]]);
    expect(routeHosts(routing, { seats: 100 })).toEqual([["usr_big"]]);
  });

  it("matches a rule without conditions unconditionally", () => {
    expect(routeHosts({ rules: [{ when: [], hostGroups: [["usr_any"]] }], fallback: [] }, {})).toEqual([["usr_any"]]);
  });

  it("keeps each host once, in its highest-priority group, and drops empty groups", () => {
    const r: Routing = {
      rules: [],
      fallback: [[], ["usr_a", "usr_b", "usr_a"], ["usr_b", "usr_c"], ["usr_a"], []],
    };
    expect(routeHosts(r, {})).toEqual([["usr_a", "usr_b"], ["usr_c"]]);
  });

  it("returns no groups when the matched groups are empty", () => {
    expect(routeHosts({ rules: [], fallback: [[], []] }, {})).toEqual([]);
  });
});
