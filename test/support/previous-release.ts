import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The previous release, built from source beside this checkout, for the mixed-version test:
// releases/baseline.json names its commit; `git worktree add --detach` checks that commit out
// into a cache directory outside the repository (PREVIOUS_RELEASE_CACHE, else the system's temp
// directory), keyed by the commit, and its packages are installed there once. The worktree's
// registration is then dropped (its `.git` file removed, `git worktree prune`): what stays is a
// plain tree that later runs, and other clones of the repository, reuse as it is.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const INSTALLED = ".platform-installed";

export interface PreviousRelease {
  version: string;
  commit: string;
  /** The checkout its processes run from. */
  root: string;
}

const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: "pipe" }).trim();

function npm(root: string, args: string[]): { ok: boolean; output: string } {
  const r = spawnSync("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline"], {
    cwd: root,
    encoding: "utf8",
    timeout: 600_000,
  });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.slice(-4000) };
}

/** The previous release, checked out and installed (once per commit). Throws a message naming what is missing. */
export function previousRelease(): PreviousRelease {
  const baseline = JSON.parse(readFileSync(join(ROOT, "releases", "baseline.json"), "utf8")) as {
    version: string;
    commit: string;
  };
  const { version, commit } = baseline;
  const root = join(process.env.PREVIOUS_RELEASE_CACHE ?? join(tmpdir(), "platform-previous-release"), commit);
  if (existsSync(join(root, INSTALLED))) return { version, commit, root };

  try {
    git("cat-file", "-e", `${commit}^{commit}`);
  } catch {
    const shallow = existsSync(join(git("rev-parse", "--git-common-dir"), "shallow"));
    throw new Error(
      `the previous release ${version} (commit ${commit}, releases/baseline.json) is not in this clone` +
        (shallow ? " because the clone is shallow" : "") +
        `: the mixed-version test builds it from that commit. Fetch it (git fetch --unshallow, or` +
        ` git fetch origin v${version}; in CI checkout with fetch-depth: 0) and run again.`,
    );
  }
  rmSync(root, { recursive: true, force: true });
  mkdirSync(dirname(root), { recursive: true });
  git("worktree", "add", "--detach", root, commit);
  // A plain tree from now on: no registration in this repository to clean up, reusable by any clone.
  rmSync(join(root, ".git"), { force: true });
  git("worktree", "prune");
  let install = npm(root, ["ci"]);
  // 1.0.0's lockfile lacks the other platforms' optional squawk binaries (fixed after it), so
  // `npm ci` refuses it as out of sync; `npm install --no-save` installs the same locked versions.
  if (!install.ok) install = npm(root, ["install", "--no-save"]);
  if (!install.ok) throw new Error(`installing the previous release ${version} in ${root} failed:\n${install.output}`);
  writeFileSync(join(root, INSTALLED), `${new Date().toISOString()}\n`);
  return { version, commit, root };
}
