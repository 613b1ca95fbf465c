/** How long a process may take to drain after SIGTERM before it exits anyway (below Kubernetes' 30 s grace). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 20_000;

export interface ShutdownOptions {
  /** Process name for the lines written to stderr. */
  name: string;
  /** Stops the process's work in order; the process exits 0 once it resolves. */
  stop: (signal: string) => Promise<void>;
  /** How long `stop` may take; past it the process exits 1 whatever it is waiting for. */
  drainTimeoutMs?: number;
}

/**
 * A reader that went away (a closed pipe, `| head`) turns every later write into EPIPE; the
 * output then has nowhere to go, and the error must neither crash the process nor stand
 * between it and its exit.
 */
export function ignoreBrokenPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (!stream.listeners("error").includes(swallow)) stream.on("error", swallow);
  }
}

function swallow(): void {}

function say(line: string): void {
  try {
    process.stderr.write(`${line}\n`);
  } catch {
    // stderr is gone too: nothing left to tell.
  }
}

/**
 * SIGTERM and SIGINT stop the process gracefully; it exits when `stop` resolves, or after
 * `drainTimeoutMs` regardless of what is still open (a stuck stream, a peer that never
 * closes its connection); a second signal exits at once.
 */
export function exitOnSignals(options: ShutdownOptions): void {
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  ignoreBrokenPipes();
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) {
      say(`${options.name}: ${signal} received again, exiting now`);
      process.exit(1);
    }
    stopping = true;
    say(`${options.name}: ${signal} received, stopping`);
    // Not unref'd: this timer is what guarantees the exit when the drain hangs.
    setTimeout(() => {
      say(`${options.name}: still draining after ${drainTimeoutMs} ms, exiting anyway`);
      process.exit(1);
    }, drainTimeoutMs);
    options.stop(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        say(`${options.name}: stopping failed: ${(err as Error)?.message ?? err}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
