/** RFC 9457 problem details, as every error response carries them (documentation only). */
export const problemSchema = {
  $id: "Problem",
  type: "object",
  description:
    "RFC 9457 problem details. `type` is `{docs_url}/platform-api/errors/<error-name>`; some types add extension members.",
  required: ["type", "title", "status", "detail"],
  properties: {
    type: { type: "string", format: "uri" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    requestId: { type: "string", description: "Id of the request, as in X-Request-Id; quote it when reporting" },
    requiredScope: { type: "string", description: "insufficient-scope, delegation-scope-insufficient" },
    grantedScopes: {
      type: "array",
      items: { type: "string" },
      description: "delegation-scope-insufficient: the scopes the token may exercise on the child",
    },
    expiredAt: { type: "string", format: "date-time", description: "subscription-expired" },
    field: {
      type: "string",
      description: "invalid-field, invalid-filter, availability-request-invalid: the offending field or parameter",
    },
    seatLimit: { type: "integer", description: "seat-limit-exceeded: the organization's seat cap" },
    remainingSeats: { type: "integer", description: "seat-limit-exceeded: seats still available" },
    rerunAvailability: {
      type: "boolean",
      description: "slot-conflict: always true; fetch availability again and book another slot",
    },
    fieldErrors: {
      type: "array",
      description: "form-validation: each field that failed, with the reason",
      items: {
        type: "object",
        required: ["field", "message"],
        properties: { field: { type: "string" }, message: { type: "string" } },
      },
    },
  },
  additionalProperties: true,
} as const;
