#!/usr/bin/env bash
# A long fuzzing campaign in chunks: frames [k*CHUNK, (k+1)*CHUNK) of seed SEED, for k = 0, 1, …
# until TOTAL, each chunk in a process (and server) of its own, so that an input that stops a
# process (a stalled event loop, exhausted memory) costs the rest of its chunk, not the campaign.
# Findings accumulate in OUT/findings.jsonl, every chunk's output in OUT/log.
#
#   tools/fuzz/campaign.sh SEED TOTAL [CHUNK=500000] [OUT=.tmp/fuzz/SEED] [npm run fuzz options…]
set -uo pipefail
cd "$(dirname "$0")/../.."
seed=$1 total=$2 chunk=${3:-500000} out=${4:-.tmp/fuzz/$1}
shift $(( $# < 4 ? $# : 4 ))
mkdir -p "$out"
for (( from = 0; from < total; from += chunk )); do
  n=$(( total - from < chunk ? total - from : chunk ))
  echo "== frames $from..$(( from + n - 1 )) of seed $seed ($(date -u +%H:%M:%S))" | tee -a "$out/log"
  node --import tsx tools/fuzz/main.ts --seed "$seed" --from "$from" --frames "$n" \
    --out "$out/findings.jsonl" "$@" >> "$out/log" 2>&1
  echo "== exit $?" | tee -a "$out/log"
done
