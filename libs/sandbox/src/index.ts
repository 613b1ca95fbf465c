// The sandbox definitions every context's sandbox is built from (see the README's sandbox
// section): ids by label, identity's organizations and users, scheduling's calendar, and the
// notable fixtures. Data and derivation only; each service seeds its own part.
export * from "./data.js";
export * from "./fixtures.js";
export * from "./identity.js";
export * from "./ids.js";
export * from "./scheduling.js";
export * from "./types.js";
