import { FEATURE_KEYS, type FeatureSet, type LicenseTierSlug, type OrganizationRecord } from "./model.js";
import { type Seats, seats } from "./seats.js";

const TIER_NAMES: Record<LicenseTierSlug, string> = {
  free: "Free",
  starter: "Starter",
  professional: "Professional",
  enterprise: "Enterprise",
};

export interface LicenseTierView {
  slug: LicenseTierSlug;
  name: string;
}

export function licenseTier(slug: LicenseTierSlug): LicenseTierView {
  return { slug, name: TIER_NAMES[slug] };
}

export interface EntitlementsView {
  orgId: string;
  features: FeatureSet;
  seats: Seats;
  licenseTier: LicenseTierView;
  asOf: Date;
}

/**
 * Only the fixed key set is exposed; a key missing from a stored snapshot reads as false,
 * which is also how a retired key reads for one major version.
 */
export function normaliseFeatures(stored: Partial<Record<string, unknown>>): FeatureSet {
  return Object.fromEntries(FEATURE_KEYS.map((k) => [k, stored[k] === true])) as FeatureSet;
}

/** The license snapshot of an organization, with `seatsUsed` counted by `holdsSeat`. */
export function shapeEntitlements(org: OrganizationRecord, seatsUsed: number): EntitlementsView {
  return {
    orgId: org.id,
    features: normaliseFeatures(org.features),
    seats: seats(org.seatTotal, seatsUsed),
    licenseTier: licenseTier(org.licenseTier),
    asOf: org.licenseAsOf,
  };
}
