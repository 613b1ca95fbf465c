// The text `platform --help` ends with: examples and the environment the admin commands read.
import { DEFAULT_ADMIN_URL, DEFAULT_SANDBOX_SEED } from "./admin-plane.js";

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

Environment:
  PLATFORM_ADMIN_URL     admin plane address (default ${DEFAULT_ADMIN_URL}); --admin-url overrides it
  PLATFORM_ADMIN_SECRET  admin secret (default: the platform's development secret)
  SANDBOX_SEED           sandbox seed, for \`sandbox keys\` when the platform is not running (default "${DEFAULT_SANDBOX_SEED}")`;
