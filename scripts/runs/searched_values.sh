#!/usr/bin/env bash
# The searched-values recipe (--config searched_2p: policy_objective searched_mirror) on the solvable decks, three
# seeds each, read by exact NashConv from each run's eval.csv; and its screens (worlds, share, cut).
# One after another; safe to start again after a stop (a run folder with a checkpoint is carried on with --resume;
# a finished run ends at once).
# Usage: scripts/runs/searched_values.sh [ROW ...]   (no argument: every row of ORDER below, in order)
#        ROWS_ONLY=1 scripts/runs/searched_values.sh    (each row's name and command, tab-separated; runs nothing)
# Run it from a detached worktree so that edits to the main tree do not change a run under way, e.g.
#   git worktree add --detach ../wt HEAD && cd ../wt && PYTHONPATH=<folder linking rouba_env and rouba_training
#   to this tree> taskset -c 1 nohup bash scripts/runs/searched_values.sh > ../searched.log 2>&1 &
# and copy each finished run's eval.csv, metrics.csv, final_eval.json and policy back (a run's checkpoint.pt
# while it is to be resumed, named in tests/test_repository.py's TO_BE_RESUMED).
set -uo pipefail
source "$(dirname "$0")/rows.bash"
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
declare -A ROWS=(
  # the first recipe (its critic trained beside the fit, 4 passes in minibatches of 2,048): stopped at update 55,
  # NashConv 0.027 from update 40 on
  [medium_searched_critic]="--rules medium --config searched_2p --total-steps 6000000 --vf-coef 0.5 --update-epochs 4 --minibatch-size 2048"
  # a screen of the search on medium, one seed: fewer worlds for less time a decision
  [medium_searched_k8]="--rules medium --config searched_2p --total-steps 6000000 --search-worlds 8"
  # twice the passes over each batch: does the fit follow its closed-form step more closely? (stopped at update 5
  # for the next row: the fit moved the policy by a twentieth of the step it was asked, the critic's gradients
  # sharing the network and the optimizer's scale)
  [medium_searched_epochs8]="--rules medium --config searched_2p --total-steps 6000000 --update-epochs 8"
  # the fit alone: no critic loss (nothing reads the critic without a cut), twice the passes, half the minibatch
  [medium_searched_fit]="--rules medium --config searched_2p --total-steps 6000000 --vf-coef 0 --update-epochs 8 --minibatch-size 1024"
  # ... with four times the worlds at a quarter of the decisions (the same cost): half the error a value
  [medium_searched_fit_k64]="--rules medium --config searched_2p --total-steps 6000000 --vf-coef 0 --update-epochs 8 --minibatch-size 1024 --search-worlds 64 --search-share 0.25"
  # twice the decisions an update (the fitted step on exact values: 0.012 at 60 steps from 8,000 decisions a
  # step, 0.010 from 32,000): is the recipe short of decisions rather than of accuracy?
  [medium_searched_envs2048]="--rules medium --config searched_2p --total-steps 12000000 --num-envs 2048"
  # ... with a stronger pull to the moving magnet (temperature 0.2): less of each value's error stays in the policy
  [medium_searched_fit_magnet02]="--rules medium --config searched_2p --total-steps 6000000 --vf-coef 0 --update-epochs 8 --minibatch-size 1024 --magnet-coef 0.2"
  # the full game, from the shipped 2p (its actor and privileged critic): the critic trained beside the fit (it
  # sees the hidden cards and touches none of the actor's layers) ends each playout after 8 moves; half the
  # decisions searched
  [full_searched]="--rules standard --config searched_2p --start-from checkpoint:2p --vf-coef 0.5 --search-cut 8 --search-share 0.5 --total-steps 6000000"
)
for seed in 1 2 3; do
  suffix=$([ $seed = 1 ] || echo _seed$seed)
  ROWS[medium_searched$suffix]="--rules medium --config searched_2p --total-steps 6000000 --seed $seed"
  ROWS[small_searched$suffix]="--rules small --config searched_2p --total-steps 6000000 --seed $seed"
  ROWS[mini_searched$suffix]="--rules mini --config searched_2p --total-steps 500000 --seed $seed"
done
ORDER=(medium_searched mini_searched small_searched medium_searched_seed2 medium_searched_seed3 mini_searched_seed2
       mini_searched_seed3 small_searched_seed2 small_searched_seed3)

# The command that runs row $1 (a stopped run adds --resume).
row_command() {
  echo "rouba-train --run-dir $RUNS/$1 ${ROWS[$1]} --torch-threads 1 --no-progress --eval-interval 10"
}
row_done() { [ -f "$RUNS/$1/final_eval.json" ]; }  # finished (its results kept in git)
run_rows "$@"
