import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DescService } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";

// kit's client sends a call once more after a lost connection only when its proto declares it
// free of side effects (unary-transport.ts). Every read must say so, and no write may.
const GEN = join(dirname(fileURLToPath(import.meta.url)), "../src/gen");
const READ = /^(Get|List|Lookup|Resolve|Poll)[A-Z]/;

function genFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? genFiles(join(dir, e.name)) : e.name.endsWith("_pb.ts") ? [join(dir, e.name)] : [],
  );
}

async function services(): Promise<DescService[]> {
  const found: DescService[] = [];
  for (const file of genFiles(GEN)) {
    for (const value of Object.values(await import(file))) {
      if ((value as { kind?: unknown } | null)?.kind === "service") found.push(value as DescService);
    }
  }
  return found;
}

describe("idempotency levels of the RPCs", () => {
  it("marks every read NO_SIDE_EFFECTS and nothing else", async () => {
    const all = await services();
    expect(all.length).toBeGreaterThan(10);
    const wrong = all.flatMap((s) =>
      s.methods
        .filter((m) => m.methodKind === "unary")
        .filter((m) => READ.test(m.name) !== (m.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS))
        .map((m) => `${s.typeName}/${m.name}`),
    );
    expect(wrong).toEqual([]);
  });
});
