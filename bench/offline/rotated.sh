#!/bin/bash
# Serial `diagnose` at 5,000 GPU nodes for several engines, the order rotated each round so that
# each engine takes each place equally often (a machine that speeds up or slows down during the
# runs then favours none). Each ENGINE is a commit whose `git archive` tree, compiled, is at
# /tmp/bench-<commit> (bench/README.md, round 31); the bundle is offline/run.py's.
#   bench/offline/rotated.sh ROUNDS ENGINE...    prints: round engine user-s sys-s wall-s
set -u
rounds=$1; shift
engines=("$@")
bundle=${BUNDLE:-/tmp/gpunode-bench-offline/offline-5000}
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < ${#engines[@]}; k++)); do
    e=${engines[$(( (r + k) % ${#engines[@]} ))]}
    t=$( { GPUNODE_JOBS=1 PYTHONPATH=/tmp/bench-$e/src /usr/bin/time -f '%U %S %e' \
          .venv/bin/python -m gpunode diagnose --from "$bundle" -o json > "/tmp/bench-out-$e.json"; } 2>&1 | tail -1)
    echo "$r $e $t"
  done
done
