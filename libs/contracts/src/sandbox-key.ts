import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type SandboxKey, SandboxKeySchema } from "./gen/platform/identity/v1/admin_pb.js";

// A sandbox key both ways across the admin plane: identity answers with the message, the CLI
// reads it back into the same value the sandbox definition gives offline.

/** A named sandbox key with its token, as `platform sandbox keys` shows it. */
export interface SandboxKeyInfo {
  name: string;
  key: string;
  tokenId: string;
  orgId: string;
  orgName: string;
  scopes: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const timestamp = (d: Date | null) => (d ? timestampFromDate(d) : undefined);
const date = (t: Timestamp | undefined) => (t ? timestampDate(t) : null);

export function sandboxKeyMessage(k: SandboxKeyInfo): SandboxKey {
  return create(SandboxKeySchema, {
    name: k.name,
    key: k.key,
    tokenId: k.tokenId,
    orgId: k.orgId,
    orgName: k.orgName,
    scopes: k.scopes,
    expireTime: timestamp(k.expiresAt),
    revokeTime: timestamp(k.revokedAt),
  });
}

export function sandboxKeyInfo(m: SandboxKey): SandboxKeyInfo {
  return {
    name: m.name,
    key: m.key,
    tokenId: m.tokenId,
    orgId: m.orgId,
    orgName: m.orgName,
    scopes: m.scopes,
    expiresAt: date(m.expireTime),
    revokedAt: date(m.revokeTime),
  };
}
