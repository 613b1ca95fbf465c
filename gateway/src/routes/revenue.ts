import type { RouteSpec } from "../route.js";
import type { JsonSchema } from "../schemas/common.js";
import { revenueJsonSchemas } from "../schemas/revenue.js";
import type { ServiceClients } from "../services.js";
import { dealRoutes } from "./revenue/deals.js";
import { insightRoutes } from "./revenue/insights.js";
import { qnaRoutes } from "./revenue/qna.js";

/** Deals, deal Q&As and 8P insights: the routes the revenue service serves (one module per aggregate). */
export function routes(clients: ServiceClients): RouteSpec[] {
  return [...dealRoutes(clients.revenue), ...qnaRoutes(clients.revenue), ...insightRoutes(clients.revenue)];
}

export const schemas: readonly JsonSchema[] = revenueJsonSchemas;
