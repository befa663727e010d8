#!/usr/bin/env bash
# The test command.
#
#   npm test                       every static check, then every tier on the release Node matrix
#                                  (scripts/run-tests.mjs --matrix: all tiers on Node 24, unit and
#                                  e2e on Node 22 and 20)
#   bash scripts/test.sh ARGS...   no static checks; the tests scripts/run-tests.mjs selects with ARGS
#                                  (npm run test:e2e is `--tier e2e`, npm run test:interop `--tier interop`)
#
# Either way it installs what the tests need, builds (the e2e tests start the compiled server and
# CLIs) and starts a throwaway PostgreSQL on loopback for the tests that use one.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure.sh
source scripts/lib/ensure-java.sh

ensure_node_modules
ensure_system_packages
ensure_java
npm run -s build

if [ "$#" -eq 0 ]; then
  echo "== lint"; npx biome check .
  echo "== typecheck"; npx tsc -p tsconfig.json --noEmit
  echo "== folder boundaries"; npx depcruise --config .dependency-cruiser.cjs src
  echo "== generated code is current"; npm run -s gen:check
  if [ -d ../shared/reference/kafka-messages ]; then
    echo "== schemas match the reference"; npm run -s check:schemas
  elif [ "${TOPOGRAPH_REQUIRE_SHARED:-}" = 1 ]; then
    echo "== schemas: ../shared/reference/kafka-messages not found (TOPOGRAPH_REQUIRE_SHARED=1)"; exit 1
  else
    echo "== schemas: ../shared/reference/kafka-messages not found: not run"
  fi
  set -- --matrix
fi

source scripts/lib/pg-cluster.sh
pg_cluster_start
trap pg_cluster_stop EXIT

node scripts/run-tests.mjs "$@"
