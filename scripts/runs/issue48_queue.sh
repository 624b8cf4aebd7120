#!/usr/bin/env bash
# Issue 48's runs: the default recipe (rouba-train's defaults) on every deck, the 0.4 pool recipe beside it on
# the full game, and the exploiters that bound both networks. One after another on one core; safe to start
# again after a stop (a run folder with a checkpoint is carried on with --resume; a finished run ends at once).
# Usage: scripts/runs/issue48_queue.sh [ROW ...]   (no argument: every row below, in order)
set -uo pipefail
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
declare -A ROWS=(
  # mini and small with nothing but the deck (and the seed) given: the targets are median NashConv of 3 seeds
  [mini_default]="--rules mini"
  [mini_default_seed2]="--rules mini --seed 2"
  [mini_default_seed3]="--rules mini --seed 3"
  [small_default]="--rules small"
  [small_default_seed2]="--rules small --seed 2"
  [small_default_seed3]="--rules small --seed 3"
  # the main job (2 players, the full game, 3M learner steps) and the 0.4 recipe for the same steps
  [full_default]=""
  [full_pool_2p]="--config pool_2p"
  # their exploiters (3M steps each, warm-started from the network): the bound that ranks them
  [abr_full_default]="--best-response checkpoint:$RUNS/full_default/policy"
  [abr_full_pool_2p]="--best-response checkpoint:$RUNS/full_pool_2p/policy"
  # their local best responses (2,000 games, 16 worlds a move): the bound that separates networks
  [lbr_full_default]="--rules standard --players checkpoint:$RUNS/full_default/policy --lbr 2000 --lbr-worlds 16"
  [lbr_full_pool_2p]="--rules standard --players checkpoint:$RUNS/full_pool_2p/policy --lbr 2000 --lbr-worlds 16"
  # mixed's table sizes: one network for 2, 3 and 4 players, as the shipped mixed is trained
  [mixed_default]="--num-players 2 3 4 --eval-opponents heuristic"
)
ORDER=(mini_default mini_default_seed2 mini_default_seed3 full_default full_pool_2p abr_full_default
       abr_full_pool_2p small_default small_default_seed2 small_default_seed3 lbr_full_default lbr_full_pool_2p
       mixed_default)
[ $# -gt 0 ] && ORDER=("$@")
for row in "${ORDER[@]}"; do
  flags=${ROWS[$row]?unknown row $row}
  if [[ $row == lbr_* ]]; then
    out=scripts/results/lbr/${row#lbr_}.json
    [ -f "$out" ] && { echo "=== $row: done"; continue; }
    echo "=== $row $(date -u +%FT%TZ)"
    # shellcheck disable=SC2086
    rouba-exploitability $flags --json "$out" --no-progress || echo "=== $row failed: $?"
    continue
  fi
  case $row in abr_*) dir=scripts/results/abr/${row#abr_} ;; *) dir=$RUNS/$row ;; esac
  if [ -f "$dir/checkpoint.pt" ]; then resume=--resume; else resume=; fi
  echo "=== $row $(date -u +%FT%TZ)"
  # shellcheck disable=SC2086
  rouba-train $resume --run-dir "$dir" $flags --torch-threads 1 --no-progress || echo "=== $row failed: $?"
done
