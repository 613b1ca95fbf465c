# syntax=docker/dockerfile:1
# One image per process, chosen by target:
#   docker build --target gateway -t platform/gateway .
#   targets: gateway, identity, scheduling, crm-data, revenue, analytics, webhooks, webhooks-delivery, request-logs
# An image runs its process compiled to JavaScript (`npm run build`: esbuild bundles the
# process's own code and the libs into dist/<process>/, with its SQL migrations) on the
# production dependencies of its own workspace only (`npm ci --omit=dev -w <workspace>`): no
# TypeScript sources, no tsx, no other service, no dev tooling. Every target runs as the
# non-root `node` user (uid/gid 1000, numeric so Kubernetes' runAsNonRoot can verify it) and
# works with a read-only root filesystem. No HEALTHCHECK: probes live in docker-compose.yml
# and the Kubernetes manifests. Node 22 LTS (NODE_IMAGE=node:24-bookworm-slim with NODE_FLAGS= builds on 24).
ARG NODE_IMAGE=node:22-bookworm-slim

# ---- the workspace's package manifests and lockfile (what every npm ci below reads) ----
FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/kit/package.json libs/kit/
COPY libs/sandbox/package.json libs/sandbox/
COPY gateway/package.json gateway/
COPY services/identity/package.json services/identity/
COPY services/scheduling/package.json services/scheduling/
COPY services/crm-data/package.json services/crm-data/
COPY services/revenue/package.json services/revenue/
COPY services/analytics/package.json services/analytics/
COPY services/webhooks/package.json services/webhooks/
COPY services/request-logs/package.json services/request-logs/
COPY cli/package.json cli/
COPY runtime/package.json runtime/

# ---- compile every process (dev dependencies: esbuild, tsx to run the build script) ----
FROM manifests AS build
# --ignore-scripts: no install script runs in the image build (esbuild's binary comes from
# its platform package, not a postinstall).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.base.json ./
COPY libs libs
COPY gateway gateway
COPY services services
COPY runtime runtime
COPY console console
COPY scripts/build.ts scripts/build-console.ts scripts/
# The build context has no .git: the commit every process reports (build_info, /healthz) is
# --build-arg REVISION=$(git rev-parse HEAD), as the image's revision label.
ARG REVISION=unknown
RUN BUILD_COMMIT=${REVISION} node --import tsx scripts/build.ts

# ---- production dependencies of gateway alone ----
FROM manifests AS deps-gateway
# The bundle holds the @platform/* code, so their workspace links are dropped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w gateway --include-workspace-root=false \
  && rm -rf node_modules/@platform \
  && npm cache clean --force

# ---- production dependencies of services/identity alone ----
FROM manifests AS deps-identity
# The bundle holds the @platform/* code, so their workspace links are dropped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w services/identity --include-workspace-root=false \
  && rm -rf node_modules/@platform \
  && npm cache clean --force

# ---- production dependencies of services/scheduling alone ----
FROM manifests AS deps-scheduling
# The bundle holds the @platform/* code, so their workspace links are dropped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w services/scheduling --include-workspace-root=false \
  && rm -rf node_modules/@platform \
  && npm cache clean --force

# ---- production dependencies of services/crm-data alone ----
FROM manifests AS deps-crm-data
# The bundle holds the @platform/* code, so their workspace links are dropped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w services/crm-data --include-workspace-root=false \
  && rm -rf node_modules/@platform \
  && npm cache clean --force

# ---- production dependencies of services/revenue alone ----
FROM manifests AS deps-revenue
# The bundle holds the @platform/* code, so their workspace links are dropped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w services/revenue --include-workspace-root=false \
  && rm -rf node_modules/@platform \
  && npm cache clean --force

# ---- production dependencies of services/analytics alone ----
FROM manifests AS deps-analytics
# The bundle holds the @platform/* code, so their workspace links are dropped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w services/analytics --include-workspace-root=false \
  && rm -rf node_modules/@platform \
  && npm cache clean --force

# ---- production dependencies of services/webhooks alone ----
FROM manifests AS deps-webhooks
# The bundle holds the @platform/* code, so their workspace links are dropped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w services/webhooks --include-workspace-root=false \
  && rm -rf node_modules/@platform \
  && npm cache clean --force

# ---- production dependencies of services/request-logs alone ----
FROM manifests AS deps-request-logs
# The bundle holds the @platform/* code, so their workspace links are dropped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w services/request-logs --include-workspace-root=false \
  && rm -rf node_modules/@platform \
  && npm cache clean --force

# ---- what every image shares: the runtime and its settings ----
FROM ${NODE_IMAGE} AS base
ARG NODE_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="platform" \
      org.opencontainers.image.description="Platform Integration API" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="UNLICENSED" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
# Node flags for every process (scripts/node-flags.sh says why): on Node 22, AsyncLocalStorage
# without async_hooks. Node 24 does that by default and refuses the flag: build it with
# --build-arg NODE_FLAGS= there.
ARG NODE_FLAGS=--experimental-async-context-frame
# NODE_COMPILE_CACHE: Node keeps the V8 code of the modules it loaded in /tmp, the pod's
# emptyDir, which outlives a container's restart: a restarted process (kill -9, OOM) starts
# without compiling its modules again.
ENV NODE_ENV=production \
    METRICS_PORT=9464 \
    NODE_COMPILE_CACHE=/tmp/node-compile-cache \
    NODE_OPTIONS="--enable-source-maps ${NODE_FLAGS}"
WORKDIR /app
USER 1000:1000
EXPOSE 9464

FROM base AS identity
LABEL org.opencontainers.image.title="platform-identity"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-identity /app/node_modules node_modules
COPY --from=build /app/dist/identity dist/identity
EXPOSE 7101 8081
CMD ["node", "dist/identity/main.js"]

FROM base AS scheduling
LABEL org.opencontainers.image.title="platform-scheduling"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-scheduling /app/node_modules node_modules
COPY --from=build /app/dist/scheduling dist/scheduling
EXPOSE 7102
CMD ["node", "dist/scheduling/main.js"]

FROM base AS crm-data
LABEL org.opencontainers.image.title="platform-crm-data"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-crm-data /app/node_modules node_modules
COPY --from=build /app/dist/crm-data dist/crm-data
EXPOSE 7103 8083
CMD ["node", "dist/crm-data/main.js"]

FROM base AS revenue
LABEL org.opencontainers.image.title="platform-revenue"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-revenue /app/node_modules node_modules
COPY --from=build /app/dist/revenue dist/revenue
EXPOSE 7104 8084
CMD ["node", "dist/revenue/main.js"]

FROM base AS analytics
LABEL org.opencontainers.image.title="platform-analytics"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-analytics /app/node_modules node_modules
COPY --from=build /app/dist/analytics dist/analytics
EXPOSE 7105 8085
CMD ["node", "dist/analytics/main.js"]

# The webhook API and its delivery worker share a workspace (and its dependencies).
FROM base AS webhooks-delivery
LABEL org.opencontainers.image.title="platform-webhooks-delivery"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-webhooks /app/node_modules node_modules
COPY --from=build /app/dist/webhooks-delivery dist/webhooks-delivery
EXPOSE 7116
CMD ["node", "dist/webhooks-delivery/main.js"]

FROM base AS webhooks
LABEL org.opencontainers.image.title="platform-webhooks"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-webhooks /app/node_modules node_modules
COPY --from=build /app/dist/webhooks dist/webhooks
EXPOSE 7106
CMD ["node", "dist/webhooks/main.js"]

FROM base AS request-logs
LABEL org.opencontainers.image.title="platform-request-logs"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-request-logs /app/node_modules node_modules
COPY --from=build /app/dist/request-logs dist/request-logs
EXPOSE 7107
CMD ["node", "dist/request-logs/main.js"]

# The gateway last, so a plain `docker build .` builds it.
FROM base AS gateway
LABEL org.opencontainers.image.title="platform-gateway"
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps-gateway /app/node_modules node_modules
COPY --from=build /app/dist/gateway dist/gateway
# The developer console the gateway serves at /console (dist/console beside dist/gateway).
COPY --from=build /app/dist/console dist/console
EXPOSE 8080
CMD ["node", "dist/gateway/main.js"]
