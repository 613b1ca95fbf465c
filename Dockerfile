# syntax=docker/dockerfile:1
# One image per process, chosen by target: `docker build --target gateway .`, `--target identity`,
# `--target scheduling` (which carries identity's sandbox definition for its demo data).
# Sources run through tsx, so the image carries the TypeScript sources and production
# dependencies only (no dev tooling, no tests).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/contracts/package.json libs/contracts/
COPY libs/kit/package.json libs/kit/
COPY gateway/package.json gateway/
COPY services/identity/package.json services/identity/
COPY services/scheduling/package.json services/scheduling/
COPY cli/package.json cli/
COPY runtime/package.json runtime/
RUN npm ci --omit=dev --no-audit --no-fund && npm install --no-save tsx@4 && npm cache clean --force

FROM node:20-bookworm-slim AS base
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY package.json ./
COPY libs libs
USER node

FROM base AS identity
COPY --chown=node services/identity services/identity
EXPOSE 7101 8081
CMD ["node", "--import", "tsx", "services/identity/src/main.ts"]

FROM base AS scheduling
COPY --chown=node services/identity services/identity
COPY --chown=node services/scheduling services/scheduling
EXPOSE 7102
CMD ["node", "--import", "tsx", "services/scheduling/src/main.ts"]

FROM base AS gateway
COPY --chown=node gateway gateway
EXPOSE 8080
CMD ["node", "--import", "tsx", "gateway/src/main.ts"]
