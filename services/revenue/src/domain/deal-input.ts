import { type CustomFields, customFieldsMismatch } from "./custom-fields.js";
import { type DealSchemaRecord, type Stage, stageOf } from "./deal-schema.js";

export interface AmountInput {
  value?: number | undefined;
  currency: string;
}

const CURRENCY = /^[A-Z]{3}$/;

/** The amount as a deal stores it; an amount whose value lacks a valid currency is 422 schema-mismatch. */
export function amountProblem(amount: AmountInput): string | undefined {
  if (amount.value !== undefined && amount.currency === "")
    return "amount.currency is required when amount.value is set";
  if (amount.currency !== "" && !CURRENCY.test(amount.currency)) {
    return `amount.currency '${amount.currency}' is not an ISO 4217 code (three capital letters)`;
  }
  if (amount.value !== undefined && (!Number.isFinite(amount.value) || amount.value < 0)) {
    return "amount.value must be a number of at least 0";
  }
  return undefined;
}

/**
 * What a deal write must satisfy under its schema: the stage exists in it, the amount's
 * currency is explicit, the custom fields are the schema's with values of their types.
 * Returns the stage, or the reason it does not fit.
 */
export function checkAgainstSchema(
  schema: DealSchemaRecord,
  deal: { stage: string; amount: AmountInput | null; customFields: CustomFields },
): { stage: Stage } | { mismatch: string } {
  const stage = stageOf(schema, deal.stage);
  if (!stage) {
    return { mismatch: `stage '${deal.stage}' is not one of: ${schema.stages.map((s) => s.name).join(", ")}` };
  }
  const amount = deal.amount ? amountProblem(deal.amount) : undefined;
  if (amount) return { mismatch: amount };
  const fields = customFieldsMismatch(schema.customFields, deal.customFields);
  if (fields) return { mismatch: fields };
  return { stage };
}
