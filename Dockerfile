# syntax=docker/dockerfile:1
# One image per process, chosen by target:
#   docker build --target gateway -t platform/gateway .
#   targets: gateway, identity, scheduling, crm-data, revenue, analytics, webhooks, webhooks-delivery
# Sources run through tsx (a production dependency of the workspace), so an image carries the
# TypeScript sources it runs and production dependencies only: no dev tooling, no tests
# (.dockerignore), no compiler toolchain. Every target runs as the non-root `node` user
# (uid/gid 1000, numeric so Kubernetes' runAsNonRoot can verify it) and works with a
# read-only root filesystem as long as /tmp is writable (tsx's transform cache lives there).
# No HEALTHCHECK: probes live in docker-compose.yml and the Kubernetes manifests.
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- production dependencies of the whole workspace (one layer shared by every target) ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/kit/package.json libs/kit/
COPY gateway/package.json gateway/
COPY services/identity/package.json services/identity/
COPY services/scheduling/package.json services/scheduling/
COPY services/crm-data/package.json services/crm-data/
COPY services/revenue/package.json services/revenue/
COPY services/analytics/package.json services/analytics/
COPY services/webhooks/package.json services/webhooks/
COPY cli/package.json cli/
COPY runtime/package.json runtime/
# --omit=dev drops every devDependency (vitest, biome, buf, typescript, ...); the kustomize
# binary CI validates the manifests with is a root optional dependency, removed here.
# --ignore-scripts: no install script runs in the image build. tsx is a production
# dependency (of cli), so it stays; the build fails if that ever changes.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/@install-binary \
  && test -f node_modules/tsx/package.json \
  && npm cache clean --force

# ---- what every process shares: runtime, dependencies, libs ----
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
ENV NODE_ENV=production \
    METRICS_PORT=9464 \
    NODE_OPTIONS=--enable-source-maps
WORKDIR /app
# Root owns the files and the process cannot change them (read-only at run time).
COPY --from=deps /app/node_modules node_modules
COPY package.json tsconfig.json tsconfig.base.json ./
COPY libs/contracts libs/contracts
COPY libs/kit libs/kit
USER 1000:1000
EXPOSE 9464

FROM base AS identity
LABEL org.opencontainers.image.title="platform-identity"
COPY services/identity services/identity
EXPOSE 7101 8081
CMD ["node", "--import", "tsx", "services/identity/src/main.ts"]

# scheduling imports identity's sandbox definitions (its demo hosts are identity's users).
FROM base AS scheduling
LABEL org.opencontainers.image.title="platform-scheduling"
COPY services/identity services/identity
COPY services/scheduling services/scheduling
EXPOSE 7102
CMD ["node", "--import", "tsx", "services/scheduling/src/main.ts"]

# crm-data imports identity's and scheduling's sandbox definitions.
FROM base AS crm-data
LABEL org.opencontainers.image.title="platform-crm-data"
COPY services/identity services/identity
COPY services/scheduling services/scheduling
COPY services/crm-data services/crm-data
EXPOSE 7103 8083
CMD ["node", "--import", "tsx", "services/crm-data/src/main.ts"]

# revenue imports identity's, scheduling's and crm-data's sandbox definitions.
FROM base AS revenue
LABEL org.opencontainers.image.title="platform-revenue"
COPY services/identity services/identity
COPY services/scheduling services/scheduling
COPY services/crm-data services/crm-data
COPY services/revenue services/revenue
EXPOSE 7104 8084
CMD ["node", "--import", "tsx", "services/revenue/src/main.ts"]

# analytics imports identity's and scheduling's sandbox definitions.
FROM base AS analytics
LABEL org.opencontainers.image.title="platform-analytics"
COPY services/identity services/identity
COPY services/scheduling services/scheduling
COPY services/analytics services/analytics
EXPOSE 7105 8085
CMD ["node", "--import", "tsx", "services/analytics/src/main.ts"]

# webhooks imports identity's sandbox definitions; the API and the delivery worker share
# one image layout and differ by entry point.
FROM base AS webhooks-sources
COPY services/identity services/identity
COPY services/webhooks services/webhooks

FROM webhooks-sources AS webhooks-delivery
LABEL org.opencontainers.image.title="platform-webhooks-delivery"
EXPOSE 7116
CMD ["node", "--import", "tsx", "services/webhooks/src/delivery-main.ts"]

FROM webhooks-sources AS webhooks
LABEL org.opencontainers.image.title="platform-webhooks"
EXPOSE 7106
CMD ["node", "--import", "tsx", "services/webhooks/src/main.ts"]

# The gateway imports only libs (contracts, kit). Last, so a plain `docker build .` builds it.
FROM base AS gateway
LABEL org.opencontainers.image.title="platform-gateway"
COPY gateway gateway
EXPOSE 8080
CMD ["node", "--import", "tsx", "gateway/src/main.ts"]
