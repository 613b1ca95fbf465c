import type { ServiceImpl } from "@connectrpc/connect";
import type { RevenueAdminService } from "@platform/contracts/revenue";
import { parseId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { schemaMessage } from "../messages.js";
import type { Store } from "../store/index.js";

/** The admin plane: deal schemas, read-only (they are configured by the platform team, not the API). */
export function adminHandlers(deps: { store: Store }): ServiceImpl<typeof RevenueAdminService> {
  const { store } = deps;
  return {
    async listDealSchemas(req) {
      const orgId = parseId("org_", req.orgId, "orgId");
      return { schemas: (await store.listSchemas(orgId)).map(schemaMessage) };
    },
    async getDealSchema(req) {
      const id = parseId("schm_", req.schemaId, "schemaId");
      const schema = await store.findSchemaById(id);
      if (!schema) throw problem("not-found", `Deal schema ${id} was not found.`);
      return { schema: schemaMessage(schema) };
    },
  };
}
