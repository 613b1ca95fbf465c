// The API key lives in sessionStorage only: gone when the tab closes, never in a URL, a cookie
// or a log. The organization acted on (partner keys) is kept beside it, for the same tab.

const KEY = "platform.console.apiKey";
const ACTING_ON = "platform.console.actingOn";

export function storedKey(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function storedActingOn(): string | undefined {
  return sessionStorage.getItem(ACTING_ON) ?? undefined;
}

export function storeActingOn(orgId: string | undefined): void {
  if (orgId) sessionStorage.setItem(ACTING_ON, orgId);
  else sessionStorage.removeItem(ACTING_ON);
}

export function forget(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ACTING_ON);
}
