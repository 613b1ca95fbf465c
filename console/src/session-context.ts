import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Credentials } from "./api.js";

/** What GET /api-keys/current says of the key (fields read defensively: absent ones are undefined). */
export interface KeyInfo {
  keyId?: string;
  orgId?: string;
  scopes?: string[];
  expiresAt?: string | null;
  partner?: boolean;
  actingOn?: string | null;
  effectiveScopes?: string[];
}

export interface Session {
  creds: Credentials;
  /** The key as its own org sees it (no acting-on). */
  key: KeyInfo;
  /** The scopes the console's calls exercise now: the child's grant ∩ the key's while acting on one. */
  scopes: readonly string[];
  /** The name of the organization acted on, when known. */
  actingOnName: string | undefined;
  actOn(orgId: string | undefined, name?: string): Promise<void>;
  signOut(): void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in console");
  return session;
}

/** Whether the session may use `scope` (what the console shows follows it). */
export function can(session: Session, scope: string): boolean {
  return session.scopes.includes(scope);
}
