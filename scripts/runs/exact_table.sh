#!/usr/bin/env bash
# The runs and files behind the exact benchmark table of the solvable decks (python scripts/exact_table.py,
# docs/solving.md): the default recipe and the 0.4 pool recipe on mini, small and medium, 10M learner steps, three
# seeds each (the exact NashConv at 1M, 3M and 10M is read from each run's eval.csv); the scripted players' exact
# NashConv on medium; CFR+ and MMD by iterations. The default recipe's shorter runs on mini and small are rows of
# default_recipe.sh. One after another on one core; safe to start again after a stop (a run folder with a
# checkpoint is carried on with --resume; a finished run ends at once; a written file is skipped).
# Usage: scripts/runs/exact_table.sh [ROW ...]   (no argument: every row of ORDER below, in order)
#        ROWS_ONLY=1 scripts/runs/exact_table.sh    (each row's name and command, tab-separated; runs nothing)
# Run it from a detached worktree so that edits to the main tree do not change a run under way, e.g.
#   git worktree add --detach ../wt HEAD && cd ../wt && PYTHONPATH=<folder linking rouba_env and rouba_training
#   to this tree> taskset -c 1 nohup bash scripts/runs/exact_table.sh > ../exact_table.log 2>&1 &
# and copy each finished run's eval.csv and final_eval.json back (a medium run's metrics.csv and policy too;
# a long run's checkpoint.pt while it is to be resumed, named in tests/test_repository.py's TO_BE_RESUMED).
set -uo pipefail
source "$(dirname "$0")/rows.bash"
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
STEPS=10000000
declare -A ROWS=(
  # the exact solver's cost and CFR+'s curve (scripts/results/solver_medium.json); MMD's (mmd_medium.json)
  [solver_medium]="--rules medium --cfr 2000"
  [mmd_medium]="--rules medium --cfr 0 --mmd 1000"
  [solver_mini]="--rules mini --cfr 1000 --mmd 1000"
  [solver_small]="--rules small --cfr 1000 --mmd 1000"
  # the scripted players' exact NashConv on medium (scripts/results/exploitability_medium*.json)
  [exploitability_medium]="--rules medium --players random greedy heuristic"
  # expert's exact probabilities on medium: 1.5-2 s an information set on one core, ~280 hours in all
  [exploitability_medium_expert]="--rules medium --players expert"
)
for seed in 1 2 3; do
  suffix=$([ $seed = 1 ] || echo _seed$seed)
  ROWS[medium_default$suffix]="--rules medium --total-steps $STEPS --seed $seed"
  ROWS[medium_pool$suffix]="--rules medium --total-steps $STEPS --config pool_2p --seed $seed"
  for deck in mini small; do
    ROWS[${deck}_default_10M$suffix]="--rules $deck --total-steps $STEPS --seed $seed"
    ROWS[${deck}_pool_10M$suffix]="--rules $deck --total-steps $STEPS --config pool_2p --seed $seed"
  done
done
ORDER=(solver_medium medium_default medium_pool medium_default_seed2 medium_pool_seed2 medium_default_seed3
       medium_pool_seed3 exploitability_medium solver_mini solver_small mmd_medium
       {mini,small}_default_10M{,_seed2,_seed3} {mini,small}_pool_10M{,_seed2,_seed3} exploitability_medium_expert)

# The command that runs row $1 (a stopped rouba-train run adds --resume).
row_command() {
  case $1 in
    solver_* | mmd_*) echo "python scripts/solver_scale.py ${ROWS[$1]} --json scripts/results/$1.json" ;;
    exploitability_*) echo "rouba-exploitability ${ROWS[$1]} --json scripts/results/$1.json" ;;
    *) echo "rouba-train --run-dir $RUNS/$1 ${ROWS[$1]} --torch-threads 1 --no-progress" ;;
  esac
}
# A finished row: its JSON file written, or its run's final evaluation (its results kept in git).
row_done() {
  case $1 in
    solver_* | mmd_* | exploitability_*) [ -f "scripts/results/$1.json" ] ;;
    *) [ -f "$RUNS/$1/final_eval.json" ] ;;
  esac
}
run_rows "$@"
