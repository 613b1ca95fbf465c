// The OpenAPI document the gateway serves, fetched once per test file, and lookups into it.
import { afterAll, beforeAll, expect } from "vitest";
import { API, buildTestGateway, type TestGateway } from "./harness.js";

export interface Operation {
  operationId: string;
  description?: string;
  parameters?: unknown[];
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }
  >;
}
export interface Document {
  openapi: string;
  info: unknown;
  security: unknown;
  components: {
    securitySchemes: Record<string, unknown>;
    schemas: Record<string, { properties: Record<string, { type: unknown }> }>;
  };
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Omit<Operation, "parameters"> & WebhookOperation }>;
}
export interface WebhookOperation {
  security: unknown[];
  parameters: { name: string; in: string; required: boolean }[];
  requestBody: { required: boolean; content: Record<string, { schema: { oneOf: { allOf: unknown[] }[] } }> };
}

/** The gateway and its document; set by serveOpenApiDocument's beforeAll. */
export let gw: TestGateway;
export let doc: Document;

/** Builds the gateway before the file's tests and fetches its document; closes it after them. */
export function serveOpenApiDocument(): void {
  beforeAll(async () => {
    gw = await buildTestGateway();
    const res = await gw.app.inject({ method: "GET", url: `${API}/openapi.json` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    doc = res.json() as Document;
  });
  afterAll(async () => {
    await gw.app.close();
  });
}

export function op(path: string, method: string): Operation {
  const found = doc.paths[path]?.[method];
  if (!found) throw new Error(`${method} ${path} is not documented`);
  return found;
}
export const response = (o: Operation, status: string) => o.responses[status]!;

export const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
