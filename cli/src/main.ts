// The `platform` executable (bin/platform.js loads this through tsx).
import { run } from "./cli.js";

const code = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
// The HTTP/2 session to the admin plane would otherwise keep the process alive until it idles out.
process.exit(code);
