#!/bin/bash
# Submits the shard array, then the merge once every task has ended (afterany: `merge` itself
# refuses, exit 66, when a shard is missing, and 65 when one saw another state of the source).
set -euo pipefail
cd "$(dirname "$0")"
export SOURCE=${SOURCE:-/data/photos} OUT=${OUT:-/data/photos-thumbframe} SHARDS=${SHARDS:-8}
array=$(sbatch --parsable --export=ALL --array="0-$((SHARDS - 1))" thumbframe-array.sbatch)
sbatch --dependency="afterany:$array" --job-name=thumbframe-merge --export=ALL \
  --wrap 'thumbframe merge --out "$OUT" --shards "$SHARDS"; s=$?; [ "$s" -le 1 ] || exit "$s"'
