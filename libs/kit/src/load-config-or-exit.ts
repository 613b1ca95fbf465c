import { ConfigError, type ConfigOf, type ConfigSpec, loadConfig } from "./config.js";

/**
 * The configuration of a process's entry point: `spec` parsed from process.env. A missing or
 * invalid variable prints its one-line message (naming the variable) and exits 1, without a
 * stack trace; any other error is thrown as it is.
 */
export function loadConfigOrExit<S extends ConfigSpec>(spec: S): ConfigOf<S> {
  try {
    return loadConfig(spec);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}
