#!/usr/bin/env bash
# Three and four seats, exactly (docs/solving.md, "Three and four seats"): every scripted player's NashConv and
# CFR+'s on mini3, mini4 and small3, the local best response beside them, and the trainer there: the
# default recipe and the 0.4 pool recipe (--config pool_2p) on mini3, mini4 and small3, each for 1M and 3M
# learner steps over three seeds; each run reports its exact NashConv at every evaluation (eval.csv).
# One after another on one core; safe to start again after a stop (a run folder with a checkpoint is carried on
# with --resume; a finished run ends at once).
# Usage: scripts/runs/seat_tables.sh [ROW ...]   (no argument: every row of ORDER below, in order)
#        ROWS_ONLY=1 scripts/runs/seat_tables.sh    (each row's name and command, tab-separated; runs nothing)
set -uo pipefail
source "$(dirname "$0")/rows.bash"
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
declare -A ROWS=(
  # every scripted player's exact NashConv and CFR+'s curve (scripts/results/exploitability_DECK.json)
  [exploitability_mini3]="--rules mini3 --players random greedy heuristic expert --cfr 1000"
  [exploitability_mini4]="--rules mini4 --players random greedy heuristic expert --cfr 1000"
  [exploitability_small3]="--rules small3 --players random greedy heuristic --cfr 1000"
  # expert's exact probabilities on small3: every hidden order of its rollouts, far longer than the others
  [exploitability_small3_expert]="--rules small3 --players expert"
  # the local best response at every seat beside the exact value (scripts/results/lbr_seats_DECK.json)
  [lbr_seats_mini3]="--rules mini3 --players random greedy heuristic --lbr 3000 --lbr-worlds 16"
  [lbr_seats_mini4]="--rules mini4 --players random greedy heuristic --lbr 4000 --lbr-worlds 16"
  [lbr_seats_small3]="--rules small3 --players random greedy heuristic --lbr 3000 --lbr-worlds 16"
)
# the full game at three and four seats: heuristic, the shipped mixed and the default recipe's network for 2, 3
# and 4 seats (default_recipe.sh mixed_default), 1,200 games each (400 and 300 deals)
for seats in 3 4; do
  ROWS[lbr_seats_full${seats}_heuristic]="--rules standard --num-players $seats --players heuristic --lbr 1200"
  ROWS[lbr_seats_full${seats}_mixed]="--rules standard --num-players $seats --players checkpoint:mixed --lbr 1200"
  ROWS[lbr_seats_full${seats}_default]="--rules standard --num-players $seats --players checkpoint:$RUNS/mixed_default/policy --lbr 1200"
done
ORDER=(exploitability_mini3 exploitability_mini4 lbr_seats_mini3 lbr_seats_mini4 exploitability_small3 lbr_seats_small3
       exploitability_small3_expert
       lbr_seats_full{3,4}_{heuristic,mixed,default})
for deck in mini3 mini4 small3; do
  for steps in 1 3; do
    for recipe in default pool; do
      for seed in 1 2 3; do
        name=${deck}_${recipe}_${steps}M$([ $seed = 1 ] || echo _seed$seed)
        ROWS[$name]="--rules $deck --seed $seed --total-steps ${steps}000000$([ $recipe = pool ] && echo ' --config pool_2p')"
        ORDER+=("$name")
      done
    done
  done
done

# The command that runs row $1 (a stopped rouba-train run adds --resume).
row_command() {
  case $1 in
    exploitability_* | lbr_seats_*) echo "rouba-exploitability ${ROWS[$1]} --no-progress --json scripts/results/$1.json" ;;
    *) echo "rouba-train --run-dir $RUNS/$1 ${ROWS[$1]} --torch-threads 1 --no-progress" ;;
  esac
}
row_done() {  # finished (its results kept in git)
  case $1 in
    exploitability_* | lbr_seats_*) [ -f "scripts/results/$1.json" ] ;;
    *) [ -f "$RUNS/$1/final_eval.json" ] ;;
  esac
}
run_rows "$@"
