#!/usr/bin/env bash
# The main job (`npm start`): installs and builds what is missing, then starts the server and the
# console on embedded storage with the topology-description plugin configured.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/ensure.sh
ensure_node_modules
if [ ! -f dist/src/cli/topograph.js ] || [ -n "$(find src -newer dist/src/cli/topograph.js -print -quit)" ]; then
  echo "== building"
  npm run -s build
fi
# The Node options of the CLI's own #! line: the young generation's fixed size (README, "Configuration").
node_options=$(sed -n '1s/^#!.* node //p' dist/src/cli/topograph.js)
# shellcheck disable=SC2086 # one word per option
exec node $node_options dist/src/cli/topograph.js start --config config/server.properties --demo "$@"
