import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type ApiToken,
  ApiTokenSchema,
  type Entitlements,
  EntitlementsSchema,
  type Organization,
  OrganizationSchema,
  type OrganizationSummary,
  OrganizationSummarySchema,
  type PartnerRelationship,
  PartnerRelationshipSchema,
  type SandboxKey,
  SandboxKeySchema,
} from "@platform/contracts/identity";
import type { EntitlementsView } from "./domain/entitlements.js";
import type { PartnerRelationshipRecord, TokenRecord } from "./domain/model.js";
import type { SandboxKeyInfo } from "./sandbox.js";
import type { OrganizationListItem, OrganizationView } from "./store/identity.store.js";

// Records to proto messages; unset optional fields stay unset (the gateway renders null).

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

export function organizationMessage(org: OrganizationView): Organization {
  return create(OrganizationSchema, {
    id: org.id,
    name: org.name,
    primaryEmailDomain: org.primaryEmailDomain,
    emailDomains: org.emailDomains,
    administrator: { userId: org.administratorUserId, displayName: org.administratorDisplayName },
    industry: org.industry,
    employeeCount: org.employeeCount,
    logoUrl: org.logoUrl ?? undefined,
    sourceRefs: { crm: org.crmOrgId ? { orgId: org.crmOrgId } : undefined },
    createTime: timestampFromDate(org.createdAt),
    updateTime: timestampFromDate(org.updatedAt),
    version: BigInt(org.version),
  });
}

export function entitlementsMessage(e: EntitlementsView): Entitlements {
  return create(EntitlementsSchema, {
    orgId: e.orgId,
    features: e.features,
    seats: e.seats,
    licenseTier: e.licenseTier,
    asOf: timestampFromDate(e.asOf),
  });
}

export function tokenMessage(t: TokenRecord): ApiToken {
  return create(ApiTokenSchema, {
    id: t.id,
    orgId: t.orgId,
    name: t.name,
    scopes: t.scopes,
    keyPreview: t.keyPreview,
    expireTime: ts(t.expiresAt),
    revokeTime: ts(t.revokedAt),
    createTime: timestampFromDate(t.createdAt),
  });
}

export function organizationSummaryMessage(o: OrganizationListItem): OrganizationSummary {
  return create(OrganizationSummarySchema, {
    id: o.id,
    name: o.name,
    partnerAdmin: o.partnerAdmin,
    parentOrgId: o.parentOrgId ?? "",
  });
}

export function relationshipMessage(r: PartnerRelationshipRecord): PartnerRelationship {
  return create(PartnerRelationshipSchema, {
    parentOrgId: r.parentOrgId,
    childOrgId: r.childOrgId,
    grantedScopes: r.grantedScopes,
    createTime: timestampFromDate(r.createdAt),
    updateTime: timestampFromDate(r.updatedAt),
    revokeTime: ts(r.revokedAt),
  });
}

export function sandboxKeyMessage(k: SandboxKeyInfo): SandboxKey {
  return create(SandboxKeySchema, {
    name: k.name,
    key: k.key,
    tokenId: k.tokenId,
    orgId: k.orgId,
    orgName: k.orgName,
    scopes: k.scopes,
    expireTime: ts(k.expiresAt),
    revokeTime: ts(k.revokedAt),
  });
}
