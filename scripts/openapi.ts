// Prints the gateway's OpenAPI document (the one served at /api/v1alpha1/openapi.json) as
// JSON on stdout, without listening on a port or reaching any service: the document is
// generated from the routes alone. Used by scripts/lint-openapi.sh.
//   node --import tsx scripts/openapi.ts > openapi.json
import { openApiDocument } from "./openapi-document.js";

process.stdout.write(`${JSON.stringify(await openApiDocument(process.env), null, 2)}\n`);
