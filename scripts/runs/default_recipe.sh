#!/usr/bin/env bash
# The default recipe (rouba-train's defaults) on every deck: mini and small over three seeds, the main job (the
# full game at 2 players, 3M learner steps) with the 0.4 pool recipe beside it for the same steps, and mixed's
# table sizes (scripts/results/TRAINING_TRIES.md row (34), docs/training.md). Their exploiters are rows of
# approximate_best_responses.sh and local_best_responses.sh (full_default, full_pool_2p). One after another on
# one core; safe to start again after a stop (a run folder with a checkpoint is carried on with --resume; a
# finished run ends at once).
# Usage: scripts/runs/default_recipe.sh [ROW ...]   (no argument: every row of ORDER below, in order)
#        ROWS_ONLY=1 scripts/runs/default_recipe.sh    (each row's name and command, tab-separated; runs nothing)
set -uo pipefail
source "$(dirname "$0")/rows.bash"
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
declare -A ROWS=(
  # the main job and the 0.4 recipe for the same steps
  [full_default]=""
  [full_pool_2p]="--config pool_2p"
  # mixed's table sizes: one network for 2, 3 and 4 players, as the shipped mixed is trained
  [mixed_default]="--num-players 2 3 4 --eval-opponents heuristic"
)
# mini and small with nothing but the deck and the seed given: the targets are median NashConv of 3 seeds
for seed in 1 2 3; do
  suffix=$([ $seed = 1 ] || echo _seed$seed)
  ROWS[mini_default$suffix]="--rules mini --seed $seed"
  ROWS[small_default$suffix]="--rules small --seed $seed"
done
ORDER=(mini_default{,_seed2,_seed3} full_default full_pool_2p small_default{,_seed2,_seed3} mixed_default)

# The command that runs row $1 (a stopped run adds --resume).
row_command() {
  echo "rouba-train --run-dir $RUNS/$1 ${ROWS[$1]} --torch-threads 1 --no-progress"
}
run_rows "$@"
