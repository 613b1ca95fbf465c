import { type ProblemError, type ProblemName, problem } from "@platform/kit/problems";
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import type { FastifySchemaCompiler } from "fastify";
import { acceptedParameters } from "./http/strict-query.js";
import type { RouteSpec } from "./route.js";

const common: Options = {
  allErrors: false,
  // ["string", "null"] and friends are plain JSON Schema, and OpenAPI 3.1 shows them as they are.
  allowUnionTypes: true,
  useDefaults: true,
  // Unknown body fields must fail (400 invalid-field), not vanish.
  removeAdditional: false,
  // `format` documents (date-time, email, uri); services judge values, with the spec's own problems.
  validateFormats: false,
};

// Query strings and path parameters are text, so they are coerced to their declared types;
// JSON bodies already carry types, and "5" where a number belongs is an invalid value.
const textAjv = new Ajv({ ...common, coerceTypes: "array" });
const bodyAjv = new Ajv({ ...common, coerceTypes: false });

// Route schemas are built afresh for each gateway (parameters, queries), so ajv's own cache, by
// object, misses; by their text one compiled check serves every route and build in the process.
const compiled = new Map<string, ValidateFunction>();

export const validatorCompiler: FastifySchemaCompiler<Record<string, unknown>> = ({ schema, httpPart }) => {
  const body = httpPart === "body";
  const key = `${body ? "body" : "text"} ${JSON.stringify(schema)}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = (body ? bodyAjv : textAjv).compile(schema);
    compiled.set(key, validate);
  }
  return validate;
};

function fieldPath(error: ErrorObject): string {
  const segments = error.instancePath
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (error.keyword === "additionalProperties") segments.push(String(error.params.additionalProperty));
  if (error.keyword === "required") segments.push(String(error.params.missingProperty));
  return segments.join(".");
}

/** A failed schema check as the spec's problem, naming the offending field. */
export function validationProblem(
  errors: ErrorObject[],
  part: string | undefined,
  route: RouteSpec | undefined,
): ProblemError {
  const error = errors[0];
  // A query parameter is named as sent: a bad value of a repeatable `action` is `action`, not `action.0`.
  const path = error ? fieldPath(error) : "";
  const field = part === "querystring" ? (path.split(".")[0] ?? "") : path;
  const where = part === "querystring" ? "Query parameter" : part === "params" ? "Path parameter" : "Field";
  const notWritable =
    part === "body" && route?.notWritable && Object.hasOwn(route.notWritable, field)
      ? route.notWritable[field]
      : undefined;
  let detail: string;
  if (!error || field === "")
    detail = `The request ${part === "body" ? "body" : part} ${error?.message ?? "is invalid"}.`;
  else if (error.keyword === "additionalProperties" && part === "querystring") detail = unknownParameter(field, route);
  else if (error.keyword === "additionalProperties")
    detail = notWritable ?? `${where} '${field}' is not accepted here.`;
  else if (error.keyword === "required") detail = `${where} '${field}' is required.`;
  else if (error.keyword === "enum") detail = `${where} '${field}' must be one of: ${allowedValues(error)}.`;
  else detail = `${where} '${field}' ${error.message}.`;
  return problem(problemName(part, field, route, error?.keyword), detail, field ? { field } : {});
}

/** An enum's values, so a typo's message shows what was meant (ajv's own message lists none). */
function allowedValues(error: ErrorObject): string {
  const values = (error.params as { allowedValues?: unknown[] }).allowedValues ?? [];
  return values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");
}

function unknownParameter(field: string, route: RouteSpec | undefined): string {
  const accepted = acceptedParameters(route?.schema?.querystring);
  return accepted.length === 0
    ? `Query parameter '${field}' is not accepted: this endpoint takes no query parameters.`
    : `Query parameter '${field}' is not accepted here; this endpoint takes ${accepted.join(", ")}.`;
}

function problemName(
  part: string | undefined,
  field: string,
  route: RouteSpec | undefined,
  keyword: string | undefined,
): ProblemName {
  if (part === "body" && route?.invalidBody) return route.invalidBody;
  if (part === "querystring" && keyword === "additionalProperties") return "invalid-filter";
  if (part === "querystring" && (route?.page?.filters.includes(field) || route?.filters?.includes(field))) {
    return "invalid-filter";
  }
  return "invalid-field";
}
