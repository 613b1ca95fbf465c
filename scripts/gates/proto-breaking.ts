import { spawnSync } from "node:child_process";
import type { Finding } from "./findings.js";
import { bin } from "./tools.js";

// The proto gate: `buf breaking` (the FILE rules of proto/buf.yaml) over the whole module, RPC
// and Kafka event messages alike, against the image the last release recorded.

interface BufAnnotation {
  path: string;
  start_line: number;
  type: string;
  message: string;
}

/** The message, enum, service or file a buf annotation is about (the last one it quotes). */
export function protoNames(message: string): string[] {
  const named = [...message.matchAll(/(?:message|enum|service|file) "([^"]+)"/g)].map((m) => m[1] ?? "");
  const last = named.at(-1);
  return last ? [last] : [];
}

/**
 * Runs `buf breaking` in `protoDir` against `image` (a buf image file). Throws when buf fails
 * for another reason than breaking changes (it exits 100 for those).
 */
export function protoBreakingChanges(protoDir: string, image: string): Finding[] {
  const run = spawnSync(bin("buf"), ["breaking", "--against", image, "--error-format", "json"], {
    cwd: protoDir,
    encoding: "utf8",
  });
  if (run.error) throw run.error;
  if (run.status !== 0 && run.status !== 100) {
    throw new Error(`buf breaking failed (exit ${run.status}): ${run.stderr || run.stdout}`);
  }
  return run.stdout
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as BufAnnotation)
    .map((a) => ({
      gate: "proto" as const,
      where: `proto/${a.path}:${a.start_line}`,
      message: `${a.message} (${a.type})`,
      names: protoNames(a.message),
    }));
}
