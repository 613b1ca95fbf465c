// The text `platform --help` ends with: examples and the environment the admin commands read.
import { DEFAULT_ADMIN_URL, DEFAULT_SANDBOX_SEED } from "./admin-plane.js";
import { DEFAULT_PLATFORM_URL } from "./endpoints.js";

export const EXAMPLES = `
Examples:
  $ platform orgs list
  $ platform sandbox keys
  $ platform sandbox fixtures
  $ platform sandbox generate --emails 10000
  $ platform tokens create --org org_… --scopes read --name reporting
  $ platform tokens create --org org_… --scopes deals:read,deals:write --expires-at 2026-12-31T00:00:00Z --json
  $ platform tokens revoke tok_…
  $ platform partners grant --parent org_… --child org_… --scopes organizations:read,users:read
  $ platform audit list --parent org_… --limit 20
  $ platform requests list --status-class 5xx --since 1h
  $ platform requests get req_…

Environment:
  PLATFORM_URL           the platform's address as \`npm start\` prints it (default ${DEFAULT_PLATFORM_URL}):
                         the API below it, the admin plane on the next port; the one setting to export
  PLATFORM_ADMIN_URL     admin plane address, when not PLATFORM_URL's next port (default ${DEFAULT_ADMIN_URL}); --admin-url overrides it
  PLATFORM_API_URL       API address of listen, trigger and requests (default PLATFORM_URL/api/v1alpha1); --api-url overrides it
  PLATFORM_API_KEY       API key of listen, trigger and requests; --api-key overrides it
  PLATFORM_ADMIN_SECRET  admin secret (default: the platform's development secret)
  SANDBOX_SEED           sandbox seed, for \`sandbox keys\` when the platform is not running (default "${DEFAULT_SANDBOX_SEED}")`;
