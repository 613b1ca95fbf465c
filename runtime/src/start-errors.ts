import { DataDirectoryInUse } from "./data-lock.js";

export interface StartSettings {
  HOST: string;
  PORT: number;
  ADMIN_PORT: number;
}

/**
 * The one line a user sees for a start failure they can fix themselves (a data directory
 * in use, a port taken or not allowed), naming the setting to change; undefined for
 * anything else, which keeps its stack trace.
 */
export function startErrorLine(err: unknown, settings: StartSettings): string | undefined {
  if (err instanceof DataDirectoryInUse) return err.message;
  const e = err as NodeJS.ErrnoException & { port?: number };
  if (e?.code !== "EADDRINUSE" && e?.code !== "EACCES") return undefined;
  const port = e.port ?? settings.PORT;
  const admin = port === settings.ADMIN_PORT && port !== settings.PORT;
  const variable = admin ? "ADMIN_PORT" : "PORT";
  const problem =
    e.code === "EADDRINUSE"
      ? `Port ${port} on ${settings.HOST} (${variable}) is already in use`
      : `Not allowed to listen on port ${port} on ${settings.HOST} (${variable})`;
  const fix = admin
    ? `set ADMIN_PORT to a free port (0 turns the admin plane off), and PLATFORM_ADMIN_URL=http://127.0.0.1:<that port> for the CLI`
    : `set PORT to a free port, e.g. PORT=${settings.PORT === 8090 ? 8091 : 8090} npm start`;
  return `${problem}: ${fix}.`;
}
