#!/usr/bin/env bash
# Issue 49's runs on the medium deck: the default recipe and the 0.4 pool recipe, 10M learner steps, three
# seeds each (the exact NashConv at 1M, 3M and 10M is read from each run's eval.csv); CFR+ by iterations.
# One after another on one core; safe to start again after a stop (a run folder with a checkpoint is carried on
# with --resume; a finished run ends at once; a written solver file is skipped).
# Usage: scripts/runs/issue49_queue.sh [ROW ...]   (no argument: every row below, in order)
set -uo pipefail
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
STEPS=10000000
declare -A ROWS=(
  [medium_default]="--rules medium --total-steps $STEPS"
  [medium_default_seed2]="--rules medium --total-steps $STEPS --seed 2"
  [medium_default_seed3]="--rules medium --total-steps $STEPS --seed 3"
  [medium_pool]="--rules medium --total-steps $STEPS --config pool_2p"
  [medium_pool_seed2]="--rules medium --total-steps $STEPS --config pool_2p --seed 2"
  [medium_pool_seed3]="--rules medium --total-steps $STEPS --config pool_2p --seed 3"
  # a wider network: does capacity limit the default recipe on medium?
  [medium_wide]="--rules medium --total-steps $STEPS --hidden-sizes 256 128"
  # what holds the default recipe at 0.03: 3M-step screens of its regularizer (the magnet) against the default
  [medium_3M_default]="--rules medium --total-steps 3000000"
  [medium_3M_magnet_linear]="--rules medium --total-steps 3000000 --magnet-schedule linear"
  [medium_3M_magnet01]="--rules medium --total-steps 3000000 --magnet-coef 0.01"
  # ... and of the network, the critic, the batch and the step size
  [medium_3M_mlp]="--rules medium --total-steps 3000000 --architecture mlp --hidden-sizes 256 256"
  [medium_3M_privileged]="--rules medium --total-steps 3000000 --critic privileged"
  [medium_3M_envs4096]="--rules medium --total-steps 3000000 --num-envs 4096"
  [medium_3M_lr3e-4]="--rules medium --total-steps 3000000 --learning-rate 3e-4"
  # the exact solver's cost and CFR+'s curve (scripts/results/solver_medium.json)
  [solver_medium]="--rules medium --cfr 2000"
)
ORDER=(solver_medium medium_default medium_pool medium_default_seed2 medium_pool_seed2 medium_default_seed3
       medium_pool_seed3)
[ $# -gt 0 ] && ORDER=("$@")
for row in "${ORDER[@]}"; do
  flags=${ROWS[$row]?unknown row $row}
  if [[ $row == solver_* ]]; then
    out=scripts/results/$row.json
    [ -f "$out" ] && { echo "=== $row: done"; continue; }
    echo "=== $row $(date -u +%FT%TZ)"
    # shellcheck disable=SC2086
    python scripts/solver_scale.py $flags --json "$out" || echo "=== $row failed: $?"
    continue
  fi
  dir=$RUNS/$row
  if [ -f "$dir/checkpoint.pt" ]; then resume=--resume; else resume=; fi
  echo "=== $row $(date -u +%FT%TZ)"
  # shellcheck disable=SC2086
  rouba-train $resume --run-dir "$dir" $flags --torch-threads 1 --no-progress || echo "=== $row failed: $?"
done
