import { idFault, isId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";

/**
 * The organization a request may read: its own (`requested` empty means /me). Another org's
 * id, well-formed or not, gets the same 404 as an unknown one, so existence never leaks.
 */
export function visibleOrgId(requested: string, callerOrgId: string): string {
  if (requested === "" || requested === callerOrgId) return callerOrgId;
  if (!isId("org_", requested)) {
    throw problem(
      "invalid-resource-id",
      `orgId '${requested}' is not a valid organization id: ${idFault("org_", requested)}`,
      {
        parameter: "orgId",
      },
    );
  }
  throw problem("organization-not-found", `Organization ${requested} was not found.`);
}
