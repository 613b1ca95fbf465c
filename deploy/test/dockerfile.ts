// The Dockerfile's stages as the deploy tests read them.
import { read } from "./deployables.js";

export interface Stage {
  from: string;
  copies: string[];
  cmd?: string[];
  user?: string;
  runs: string[];
  /** `COPY --from=<stage> <src>… <dest>`: [stage, src] pairs. */
  fromCopies: [string, string][];
}
export function dockerStages(): Map<string, Stage> {
  const stages = new Map<string, Stage>();
  let current: Stage | undefined;
  const lines = read("Dockerfile")
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((l) => !l.trim().startsWith("#"));
  for (const line of lines) {
    const from = line.match(/^FROM\s+(\S+)\s+AS\s+(\S+)/i);
    if (from) {
      current = { from: from[1] as string, copies: [], runs: [], fromCopies: [] };
      stages.set(from[2] as string, current);
      continue;
    }
    if (!current) continue;
    const copy = line.match(/^COPY\s+(.*)$/i);
    if (copy && !/--from=/.test(copy[1] as string)) {
      const args = (copy[1] as string).split(/\s+/).filter((a) => a && !a.startsWith("--"));
      current.copies.push(...args.slice(0, -1));
    }
    const copyFrom = copy && (copy[1] as string).match(/--from=(\S+)\s+(.*)$/);
    if (copyFrom) {
      const args = (copyFrom[2] as string).split(/\s+/).filter((a) => a && !a.startsWith("--"));
      const stage = current;
      for (const src of args.slice(0, -1)) stage.fromCopies.push([copyFrom[1] as string, src]);
    }
    const cmd = line.match(/^CMD\s+(\[.*\])/i);
    if (cmd) current.cmd = JSON.parse(cmd[1] as string);
    const user = line.match(/^USER\s+(\S+)/i);
    if (user) current.user = user[1];
    const run = line.match(/^RUN\s+(.*)$/i);
    if (run) current.runs.push(run[1] as string);
  }
  return stages;
}
export const stages = dockerStages();
/** What a stage and the stages it is built FROM copy, and its user and command. */
export function resolved(target: string): {
  copies: string[];
  fromCopies: [string, string][];
  runs: string[];
  user?: string;
  cmd?: string[];
} {
  const s = stages.get(target);
  if (!s) return { copies: [], fromCopies: [], runs: [] };
  const parent = stages.has(s.from) ? resolved(s.from) : { copies: [], fromCopies: [], runs: [] };
  return {
    copies: [...parent.copies, ...s.copies],
    fromCopies: [...parent.fromCopies, ...s.fromCopies],
    runs: [...parent.runs, ...s.runs],
    user: s.user ?? parent.user,
    cmd: s.cmd ?? parent.cmd,
  };
}
