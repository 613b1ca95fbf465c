// dependency-cruiser (npm run lint): no import circles anywhere in the repository's TypeScript,
// type-only imports included, and no service's application layer reaching up into its handlers.
// Imports across services and contexts are checked by scripts/check-imports.ts.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A module must not import itself through others: split out what both sides need.",
      from: {},
      to: { circular: true },
    },
    {
      name: "application-not-handlers",
      severity: "error",
      comment:
        "The application layer owns the use case and the handlers map RPC onto it: handlers import the application, never the other way round.",
      from: { path: "^services/[^/]+/src/application/" },
      to: { path: "^services/[^/]+/src/handlers/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist|\\.data|\\.run[^/]*)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    combinedDependencies: false,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
