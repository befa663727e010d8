#!/usr/bin/env bash
# Kafka's own kafka-producer-perf-test and kafka-consumer-perf-test (Apache Kafka's Java tools from
# ../shared/kafka-java, Java 17) against a Topograph server started for the run (compiled build,
# file log engine, a fresh data.dir), so users can compare with figures they know from Kafka.
#
#   npm run build && bash bench/data/kafka-perf.sh [records=500000] [record-size=1024]
#
# Producer: one partition, batch.size=16384 (the default), linger.ms=0, acks=1 and then acks=all
# (idempotent, the Java producer's default), --throughput -1 (as fast as it can). Consumer: the
# records of both runs, from the beginning, twice (each time a new group). Prints `uptime` before and after each tool.
set -euo pipefail
cd "$(dirname "$0")/../.."
RECORDS=${1:-500000}
SIZE=${2:-1024}
K=${KAFKA_JAVA_DIR:-$(cd .. && pwd)/shared/kafka-java}
source scripts/lib/ensure-java.sh
ensure_java
[ -f dist/src/cli/topograph.js ] || { echo "run npm run build first" >&2; exit 1; }

DATA=$(mktemp -d "${TMPDIR:-/tmp}/topograph-perf-XXXXXX")
OUT="$DATA/server.out"
node dist/src/cli/topograph.js start --override listeners=PLAINTEXT://127.0.0.1:0 \
  --override "data.dir=$DATA/data" --override console.listener=none >"$OUT" 2>&1 &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT
PORT=""
for _ in $(seq 1 300); do
  PORT=$(sed -n 's/.*Listening on PLAINTEXT:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$OUT" | head -n 1)
  [ -n "$PORT" ] && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$OUT"; exit 1; }
  sleep 0.1
done
[ -n "$PORT" ] || { echo "the server did not start" >&2; cat "$OUT"; exit 1; }
B=127.0.0.1:$PORT
echo "server: Topograph $(git rev-parse --short HEAD) (dist), node $(node -v), $B; $(java -version 2>&1 | head -n 1)"
"$K/bin/kafka-topics" --bootstrap-server "$B" --create --topic perf --partitions 1 --replication-factor 1 >/dev/null

for ACKS in 1 all; do
  echo
  echo "== kafka-producer-perf-test acks=$ACKS, $RECORDS records of $SIZE B; load: $(uptime | sed 's/.*load average: //')"
  "$K/bin/kafka-producer-perf-test" --bootstrap-server "$B" --topic perf --num-records "$RECORDS" \
    --record-size "$SIZE" --throughput -1 --command-property acks=$ACKS batch.size=16384 linger.ms=0
done
echo
echo "== kafka-consumer-perf-test, $((2 * RECORDS)) records; load: $(uptime | sed 's/.*load average: //')"
for RUN in 1 2; do
  "$K/bin/kafka-consumer-perf-test" --bootstrap-server "$B" --topic perf --num-records "$((2 * RECORDS))" \
    --timeout 60000
done
echo
echo "load after: $(uptime | sed 's/.*load average: //')"
