import { createRequire } from "node:module";

/**
 * Static group membership (KIP-345) for kafkajs, which speaks JoinGroup v5 (the version that
 * carries `group.instance.id`) but never fills it in. A consumer that joins with an instance
 * id the group already knows takes over that member's place and partitions at once: a worker
 * restarted after a crash (kill -9, OOM, a container restart in the same pod) consumes again as
 * soon as it has joined, instead of waiting for the dead member's session to time out (10 s
 * here; Kafka's minimum is 6 s). A graceful stop still leaves the group (kafkajs sends
 * LeaveGroup with the member id), so a rolling update costs nothing either way.
 *
 * The id must be unique among the live members of a group: two processes with one id fence
 * each other in turn. Kubernetes gives each pod a stable, unique name (the downward API's
 * `metadata.name`), which survives a container restart: that is what the manifests pass.
 *
 * kafkajs looks up a request's builder through `definition.protocol({ version })` on every
 * request, so wrapping JoinGroup's `protocol` adds the id to the v5 request of a registered
 * group and to no other (third-party packages are never bundled, see scripts/build.ts).
 */
interface JoinGroupArgs {
  groupId: string;
  groupInstanceId?: string | null;
  [key: string]: unknown;
}
type Builder = (args: JoinGroupArgs) => unknown;

const require = createRequire(import.meta.url);
const joinGroup = require("kafkajs/src/protocol/requests/joinGroup/index.js") as {
  protocol: (v: { version: number }) => Builder;
};

/** groupId → this process's instance id in that group. */
const instanceIds = new Map<string, string>();

const protocol = joinGroup.protocol;
joinGroup.protocol = ({ version }) => {
  const build = protocol({ version });
  // v0–v4 have no such field; a broker that old gets the dynamic membership it always had.
  if (version < 5) return build;
  return (args) => build({ ...args, groupInstanceId: args.groupInstanceId ?? instanceIds.get(args.groupId) ?? null });
};

/** Joins `groupId` as the static member `instanceId` from now on (or dynamically, without one). */
export function setGroupInstanceId(groupId: string, instanceId: string | undefined): void {
  if (instanceId) instanceIds.set(groupId, instanceId);
  else instanceIds.delete(groupId);
}
