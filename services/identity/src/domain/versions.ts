import { problem } from "@platform/kit/problems";

/** The If-Match of a PATCH must name the current version (412 precondition-failed otherwise). */
export function checkExpectedVersion(current: number, expected: bigint, what: string): void {
  if (BigInt(current) !== expected) {
    throw problem(
      "precondition-failed",
      `The ${what} is at version ${current}, not ${expected}; read it again and send its ETag as If-Match.`,
    );
  }
}
