import type { JsonSchema } from "./common.js";
import { dealListItemSchema, dealMeetingSchema, dealSchema } from "./revenue/deals.js";
import { dealInsightsSchema, insightItemSchema, insightSchema } from "./revenue/insights.js";
import { qnaBacklogSchema, qnaSchema } from "./revenue/qna.js";

// The JSON shapes of deals, Q&A items and 8P records, and the bodies their writes take (one
// module per aggregate under revenue/).

export { INSIGHT_TYPES } from "./revenue/common.js";
export * from "./revenue/deals.js";
export * from "./revenue/insights.js";
export * from "./revenue/qna.js";

export const revenueJsonSchemas: JsonSchema[] = [
  dealListItemSchema,
  dealSchema,
  dealMeetingSchema,
  qnaSchema,
  qnaBacklogSchema,
  insightItemSchema,
  insightSchema,
  dealInsightsSchema,
];
