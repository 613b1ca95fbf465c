import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Entitlements, Organization } from "@platform/contracts/identity";

// Fields the contract always sets: their absence is a service bug, so a plain Error, which
// the error handler logs and answers with an opaque 500.

function iso(ts: Timestamp | undefined, field: string): string {
  if (!ts) throw new Error(`identity returned no ${field}`);
  return timestampDate(ts).toISOString();
}

export function organizationJson(o: Organization) {
  if (!o.administrator) throw new Error("identity returned no administrator");
  return {
    id: o.id,
    name: o.name,
    primaryEmailDomain: o.primaryEmailDomain,
    emailDomains: o.emailDomains,
    administrator: { userId: o.administrator.userId, displayName: o.administrator.displayName },
    industry: o.industry,
    employeeCount: o.employeeCount,
    logoUrl: o.logoUrl ?? null,
    sourceRefs: o.sourceRefs?.crm ? { crm: { orgId: o.sourceRefs.crm.orgId } } : {},
    createdAt: iso(o.createTime, "create_time"),
    updatedAt: iso(o.updateTime, "update_time"),
  };
}

/** The weak validator of the organization's optimistic-concurrency version. */
export function organizationEtag(o: Organization): string {
  return `W/"${o.version}"`;
}

export function entitlementsJson(e: Entitlements) {
  const f = e.features;
  return {
    orgId: e.orgId,
    features: {
      smartScheduling: f?.smartScheduling ?? false,
      teamCalendarScheduling: f?.teamCalendarScheduling ?? false,
      replyTracking: f?.replyTracking ?? false,
      emailBlast: f?.emailBlast ?? false,
      dealIntelApp: f?.dealIntelApp ?? false,
      meetingAi: f?.meetingAi ?? false,
    },
    seats: { total: e.seats?.total ?? 0, used: e.seats?.used ?? 0, available: e.seats?.available ?? 0 },
    licenseTier: { slug: e.licenseTier?.slug ?? "", name: e.licenseTier?.name ?? "" },
    asOf: iso(e.asOf, "as_of"),
  };
}
