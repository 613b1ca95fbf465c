// The `platform` executable (bin/platform.js loads this through tsx).
import { ignoreBrokenPipes } from "@platform/kit/shutdown";
import { run } from "./cli.js";

// `platform … | head` closes the pipe early: the rest of the output has nowhere to go.
ignoreBrokenPipes();

const code = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
process.exitCode = code;

/** Resolves once everything written to `stream` so far has been handed to the OS (or the reader is gone). */
const flushed = (stream: NodeJS.WriteStream) =>
  new Promise<void>((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    stream.write("", () => resolve());
  });

// A pipe is written asynchronously: exiting right after the last write would cut a large
// --json answer short. The HTTP/2 session to the admin plane would keep the process alive
// until it idles out, so it exits explicitly, but only once both streams are flushed.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);
