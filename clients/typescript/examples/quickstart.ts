// A tour of @platform/client against a running platform (`npm start` in the repository root):
//
//   node --import tsx clients/typescript/examples/quickstart.ts
//
// PLATFORM_URL (default http://127.0.0.1:8080) and PLATFORM_API_KEY choose the platform and the
// key; without a key it takes the sandbox's "acme-full" (and "northwind-partner" for the
// delegation step) from ./.data/sandbox-keys.json, which `npm start` writes.
//
// In your own project: `import { PlatformClient, PlatformError } from "@platform/client";`
import { existsSync, readFileSync } from "node:fs";
import { PlatformClient, PlatformError } from "../src/index.js";

const KEYS_FILE = ".data/sandbox-keys.json";

function sandboxKey(name: string): string | undefined {
  if (!existsSync(KEYS_FILE)) return undefined;
  const keys = JSON.parse(readFileSync(KEYS_FILE, "utf8")) as { name: string; key: string }[];
  return keys.find((k) => k.name === name)?.key;
}

const apiKey = process.env.PLATFORM_API_KEY ?? sandboxKey("acme-full");
if (!apiKey) {
  console.error(`Set PLATFORM_API_KEY, or run \`npm start\` first so that ${KEYS_FILE} exists.`);
  process.exit(1);
}
const baseUrl = process.env.PLATFORM_URL ?? "http://127.0.0.1:8080";
const client = new PlatformClient({ apiKey, baseUrl });

// 1. A typed read.
const org = await client.organizations.me();
console.log(`Organization: ${org.name} (${org.id})`);

// 2. Lists: await for one page, iterate for every item of every page.
const firstPage = await client.deals.list({ limit: 2, sort: "-amount" });
console.log(`First page: ${firstPage.items.map((d) => d.name).join(", ")}; more: ${firstPage.nextCursor !== null}`);
let open = 0;
for await (const deal of client.deals.list({ stage: ["Discovery", "Qualification", "Proposal", "Negotiation"] })) {
  open += deal.amount?.value ?? 0;
}
console.log(`Open pipeline: ${open}`);

// 3. A write: the client makes the Idempotency-Key and reuses it on every retry of the call.
const [account] = (await client.accounts.list({ limit: 1 })).items;
if (account) {
  const created = await client.send("createDeal", {
    name: `Quickstart deal ${new Date().toISOString()}`,
    accountId: account.id,
    stage: "Discovery",
  });
  console.log(`Created ${created.data.id} (status ${created.status}, replayed: ${created.replayed})`);
  const won = await client.deals.update({ dealId: created.data.id }, { stage: "Qualification" });
  console.log(`Moved it to ${won.stage}`);
}

// 4. Errors are PlatformError with a typed problem. (A sort outside the allowlist does not
// even compile: sort is a union of the allowed fields; the cast sends one anyway.)
try {
  await client.deals.list({ sort: "color" as "name" });
} catch (err) {
  if (err instanceof PlatformError && err.is("invalid-sort-field")) {
    console.log(`Sort fields allowed: ${err.problem.allowedSortFields.join(", ")} (request ${err.requestId})`);
  } else {
    throw err;
  }
}

// 5. Delegation: a partner's key acting on a managed child organization.
const partnerKey = process.env.PLATFORM_PARTNER_API_KEY ?? sandboxKey("northwind-partner");
if (partnerKey) {
  const partner = new PlatformClient({ apiKey: partnerKey, baseUrl });
  for await (const child of partner.partner.listManagedOrganizations()) {
    const me = await partner.actingOn(child.id).organizations.me();
    console.log(`Acting on ${me.name} (${me.id})`);
  }
}
