#!/usr/bin/env bash
# The test command (`npm test`): installs what the tests need, runs every static check, starts the
# services the tests use (a throwaway PostgreSQL on loopback), then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure.sh

ensure_node_modules
ensure_system_packages
npm run -s build

echo "== lint"; npx biome check .
echo "== typecheck"; npx tsc -p tsconfig.json --noEmit
echo "== folder boundaries"; npx depcruise --config .dependency-cruiser.cjs src
echo "== generated code is current"; npm run -s gen:check
if [ -d ../shared/reference/kafka-messages ]; then
  echo "== schemas match the reference"; npm run -s check:schemas
else
  echo "== schemas: ../shared/reference not found, comparison skipped"
fi

source scripts/lib/pg-cluster.sh
pg_cluster_start
trap pg_cluster_stop EXIT

echo "== tests"
node scripts/run-tests.mjs "$@"
