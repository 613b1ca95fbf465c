import type { CursorCodec } from "@platform/kit/cursor";
import { ProblemError, problem } from "@platform/kit/problems";

/**
 * Services mint cursors bound to their sort; the gateway re-signs each one it hands out so
 * that it is also bound to the endpoint that served it (operation and path ids) and to the
 * org the request acted on, and turns it back into the service's cursor when it returns. A
 * cursor of /contacts sent to /accounts, or one org's cursor sent by another, is then 400
 * invalid-cursor instead of a page of the wrong list or a silently empty one.
 */
export interface CursorScope {
  operationId: string;
  /** Path parameters (their values are part of the list: a cursor of one account's contacts is not another's). */
  params: Record<string, string>;
  /** The org the request acts on (the child when delegating). */
  orgId: string;
}

function binding(sort: string, scope: CursorScope): string {
  const params = Object.keys(scope.params)
    .sort()
    .map((name) => `${name}=${scope.params[name]}`)
    .join("&");
  // One line each; ids and operation ids carry no newline.
  return ["v1", sort, scope.operationId, params, scope.orgId].join("\n");
}

/** The cursor a client receives for a service's `cursor` minted under `sort`. */
export function sealCursor(codec: CursorCodec, cursor: string, sort: string, scope: CursorScope): string {
  return codec.encode(binding(sort, scope), codec.decode(cursor, sort));
}

/**
 * The service's cursor for one a client sent; 400 invalid-cursor when it is malformed,
 * altered, or was handed out under another sort, endpoint or org.
 */
export function openCursor(codec: CursorCodec, cursor: string, sort: string, scope: CursorScope): string {
  try {
    return codec.encode(sort, codec.decode(cursor, binding(sort, scope)));
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    throw problem(
      "invalid-cursor",
      "The cursor is malformed, was altered, or belongs to another sort, list or organization; start again without it.",
    );
  }
}

/** What the cursors of one list request are bound to; set by the guard. */
export interface PageBinding {
  sort: string;
  scope: CursorScope;
}

/** A list answer `{items, nextCursor}` with its next cursor sealed for the client. */
export function sealPage(codec: CursorCodec, page: unknown, binding: PageBinding): unknown {
  const next = (page as { nextCursor?: unknown } | null)?.nextCursor;
  if (typeof next !== "string" || next === "") return page;
  return { ...(page as object), nextCursor: sealCursor(codec, next, binding.sort, binding.scope) };
}
