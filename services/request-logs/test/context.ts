import { createContextValues, type HandlerContext } from "@connectrpc/connect";
import { requestContextKey } from "@platform/kit/connect";

/** The handler context of an integrator call of `orgId`, as the trust interceptor leaves it. */
export function apiCall(orgId: string): HandlerContext {
  const values = createContextValues().set(requestContextKey, {
    principal: "api",
    requestId: "req_test",
    orgId,
    tokenId: "tok_test",
    scopes: ["logs:read"],
  });
  return { values } as HandlerContext;
}
