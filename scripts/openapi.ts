// The gateway's OpenAPI document (the one served at /api/v1alpha1/openapi.json), generated from
// the routes alone: no port is listened on and no service is reached.
//   node --import tsx scripts/openapi.ts            prints it on stdout, with this environment's
//                                                   settings (scripts/lint-openapi.sh)
//   node --import tsx scripts/openapi.ts --write    writes the committed api/openapi.json
//                                                   (npm run generate:openapi)
// The committed file is the public contract: the typed client generates from it and the
// contract gates compare it with the last release's (scripts/contract-gates.sh). It is built
// with the default settings only, so the same routes always give the same bytes.
import { writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { openApiDocument } from "./openapi-document.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the committed document lives. */
const OPENAPI_FILE = join(ROOT, "api", "openapi.json");

const write = process.argv.includes("--write");
const document = await openApiDocument(write ? {} : process.env);
const text = `${JSON.stringify(document, null, 2)}\n`;
if (write) {
  await writeFile(OPENAPI_FILE, text);
  console.log(`wrote ${relative(process.cwd(), OPENAPI_FILE)}`);
} else {
  process.stdout.write(text);
}
