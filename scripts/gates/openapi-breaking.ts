import { apiDiff, type Diff } from "api-smart-diff";
import type { Finding } from "./findings.js";

// The OpenAPI gate: api-smart-diff (a maintained OpenAPI 3.0/3.1 differ that classifies each
// change as breaking, non-breaking or annotation) compares the last release's document with
// the current one. What is breaking is the library's rule, with one addition: a removed enum
// value fails anywhere, because clients send back what they read (a role, a stage) and switch
// on it. Webhook payloads (v2 and legacy) are the document's `webhooks`; the library reads
// operations under `paths` only, so both documents are first given a view in which each
// webhook is an operation whose response is the payload: what the platform sends a receiver is,
// to the receiver, what a response is to a client (a removed or renamed field breaks it, an
// added optional one does not).

type Json = Record<string, unknown>;

/** The API's base path: CHANGELOG lines may name an operation with or without it. */
const API_PREFIX = "/api/v1alpha1";
/** The path key under which a webhook is compared. */
const WEBHOOK = "webhook ";

/** The document as the differ sees it: each webhook moved under `paths`, its payload as a response. */
export function compatibilityView(document: Json): Json {
  const view = structuredClone(document);
  const paths = { ...((view.paths ?? {}) as Json) };
  for (const [kind, item] of Object.entries((view.webhooks ?? {}) as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const body = operation.requestBody as Json | undefined;
      paths[`${WEBHOOK}${kind}`] = {
        get: {
          operationId: operation.operationId ?? `${method} ${kind}`,
          responses: { "200": { description: "the payload", content: body?.content ?? {} } },
        },
      };
    }
  }
  view.paths = paths;
  delete view.webhooks;
  return view;
}

const isEnumRemoval = (d: Diff) =>
  d.path.includes("enum") &&
  (d.action === "remove" ||
    (d.action === "replace" &&
      Array.isArray(d.before) &&
      d.before.some((v: unknown) => !(Array.isArray(d.after) && d.after.includes(v)))));

/** The operation (or webhook) a diff under `paths` belongs to, and the names that record it. */
function operationOf(path: (string | number)[]): { where: string; names: string[] } {
  const [, route = "", method] = path.map(String);
  if (route.startsWith(WEBHOOK)) {
    const kind = route.slice(WEBHOOK.length);
    return { where: `webhook ${kind}`, names: [kind] };
  }
  const short = route.startsWith(API_PREFIX) ? route.slice(API_PREFIX.length) : route;
  if (method === undefined) return { where: route, names: [route, short] };
  const verb = method.toUpperCase();
  return { where: `${verb} ${route}`, names: [`${verb} ${route}`, `${verb} ${short}`] };
}

/** Each breaking change from `before` to `after` (two OpenAPI documents), by operation and webhook. */
export function openApiBreakingChanges(before: Json, after: Json): Finding[] {
  const diffs = apiDiff(compatibilityView(before), compatibilityView(after));
  return diffs
    .filter((d) => d.path[0] === "paths" && (d.type === "breaking" || isEnumRemoval(d)))
    .map((d) => {
      const { where, names } = operationOf(d.path);
      const at = d.path.slice(3).join("/");
      // Some of the library's descriptions lack their subject ("… in Response 200 …").
      const value = d.action === "add" ? d.after : d.before;
      const subject = typeof value === "object" ? String(d.path.at(-1)) : JSON.stringify(value);
      const what = d.description?.match(/^\S/) ? d.description : `[${d.action}] ${subject}${d.description ?? ""}`;
      return { gate: "openapi" as const, where, names, message: at ? `${what}  [at ${at}]` : what };
    });
}
