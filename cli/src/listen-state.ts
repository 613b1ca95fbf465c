import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

// What `platform listen` keeps between runs, per API key, in the user's config directory:
// the signing secret (stable, so a receiver configured once keeps verifying, as Stripe's CLI
// keeps its secret per device and account) and the last event forwarded to each API (so a
// restart resumes where the previous run stopped). The key itself is never written, only a
// hash naming it; the file is the user's alone (0600, in a 0700 directory).

interface KeyState {
  secret: string;
  /** The last forwarded event id, per API address. */
  lastEventIds: Record<string, string>;
}
interface StateFile {
  version: 1;
  keys: Record<string, KeyState>;
}

/** `$XDG_CONFIG_HOME/platform`, else `~/.config/platform`. */
export function configDir(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "platform");
}

/** The name of a key in the state file: not the key, so the file gives no access. */
function keyName(apiKey: string): string {
  return `sha256:${createHash("sha256").update(apiKey).digest("hex").slice(0, 32)}`;
}

export class ListenState {
  readonly file: string;
  readonly #dir: string;

  constructor(env: Record<string, string | undefined>) {
    this.#dir = configDir(env);
    this.file = join(this.#dir, "listen.json");
  }

  #read(): StateFile {
    try {
      const parsed = JSON.parse(readFileSync(this.file, "utf8")) as StateFile;
      if (parsed?.version === 1 && typeof parsed.keys === "object" && parsed.keys !== null) return parsed;
    } catch {
      // absent or unreadable: start afresh (a corrupt file only costs a new secret)
    }
    return { version: 1, keys: {} };
  }

  #write(state: StateFile): void {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    // Written whole and renamed, so an interrupted run never leaves half a file.
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }

  /** The key's stable secret, made with `make` and stored on first use. */
  secretFor(apiKey: string, make: () => string): string {
    const state = this.#read();
    const name = keyName(apiKey);
    const existing = state.keys[name];
    if (existing?.secret) return existing.secret;
    const secret = make();
    state.keys[name] = { secret, lastEventIds: existing?.lastEventIds ?? {} };
    this.#write(state);
    return secret;
  }

  /** The last event forwarded for this key from this API, if any. */
  lastEventId(apiKey: string, apiUrl: string): string | undefined {
    return this.#read().keys[keyName(apiKey)]?.lastEventIds[apiUrl];
  }

  /** Records the last event forwarded (or forgets it with undefined). */
  saveLastEventId(apiKey: string, apiUrl: string, eventId: string | undefined): void {
    const state = this.#read();
    const name = keyName(apiKey);
    const entry = state.keys[name] ?? { secret: "", lastEventIds: {} };
    if (eventId === undefined) delete entry.lastEventIds[apiUrl];
    else entry.lastEventIds[apiUrl] = eventId;
    state.keys[name] = entry;
    this.#write(state);
  }
}
