#!/usr/bin/env bash
# The approximate best responses of docs/exploitability.md's tables (rouba-train --best-response, warm-started
# from a network target) against the scripted players, the shipped networks and trained ones, at one budget (3M
# learner steps) with the exploiter's defaults; each row's run folder is scripts/results/abr/ROW. One after
# another on one core; safe to start again after a stop (a run folder that holds a checkpoint is carried on with
# --resume; a finished run ends at once).
# Usage: scripts/runs/approximate_best_responses.sh [ROW ...]   (no argument: every row of ORDER below, in order)
#        ROWS_ONLY=1 scripts/runs/approximate_best_responses.sh  (each row's name and command, tab-separated; runs
#        nothing)
# The table of results: python scripts/exploiter_table.py (docs/exploitability.md).
set -uo pipefail
source "$(dirname "$0")/rows.bash"
cd "$(dirname "$0")/../.."
RUNS=scripts/results/abr
POLICIES=scripts/results/runs
# The expert searches at every move (about 1.7 ms a move on mini and small, 19 ms on the full game, one core), and
# the target moves as often as the exploiter learns: its rows run a tenth of the budget (every other row's exact
# value stops moving by 300k steps), and on the full game a thirtieth with 2,400 evaluation games.
EXPERT_STEPS=300000
EXPERT_FULL_STEPS=100000
EXPERT_FULL_GAMES=2400  # not 2,000: the trainer default, which an exploiter takes as "unset" (10,000)
declare -A ROWS=(
  # the check against the exact solver: mini
  [mini_random]="--rules mini --best-response random"
  [mini_heuristic]="--rules mini --best-response heuristic"
  [mini_expert]="--rules mini --best-response expert --total-steps $EXPERT_STEPS"
  [mini_pool]="--rules mini --best-response checkpoint:$POLICIES/mini/policy"
  [mini_pool_sampled]="--rules mini --best-response checkpoint:$POLICIES/mini/policy,deterministic=false"
  [mini_regularized]="--rules mini --best-response checkpoint:$POLICIES/mini_support02_until03_env32/policy"
  [mini_regularized_sampled]="--rules mini --best-response checkpoint:$POLICIES/mini_support02_until03_env32/policy,deterministic=false"
  # small
  [small_random]="--rules small --best-response random"
  [small_heuristic]="--rules small --best-response heuristic"
  [small_expert]="--rules small --best-response expert --total-steps $EXPERT_STEPS"
  [small_pool]="--rules small --best-response checkpoint:$POLICIES/small/policy"
  [small_pool_sampled]="--rules small --best-response checkpoint:$POLICIES/small/policy,deterministic=false"
  [small_regularized]="--rules small --best-response checkpoint:$POLICIES/small_magnet_ema_10M/policy"
  [small_regularized_sampled]="--rules small --best-response checkpoint:$POLICIES/small_magnet_ema_10M/policy,deterministic=false"
  # medium: the default recipe's network as it learns (sampling), beside its exact NashConv
  [medium_default_sampled]="--rules medium --best-response checkpoint:$POLICIES/medium_default/policy,deterministic=false"
  # the full game, two seats
  [full_heuristic]="--best-response heuristic"
  [full_greedy]="--best-response greedy"
  [full_expert]="--best-response expert --total-steps $EXPERT_FULL_STEPS --final-eval-games $EXPERT_FULL_GAMES"
  [full_2p-0.3]="--best-response checkpoint:2p-0.3"
  [full_2p]="--best-response checkpoint:2p"
  [full_mixed]="--best-response checkpoint:mixed"
  [full_magnet_ema]="--best-response checkpoint:$POLICIES/full_magnet_ema/policy"
  [full_magnet_ema_mb1024]="--best-response checkpoint:$POLICIES/full_magnet_ema_mb1024/policy"
  [full_every_seat_ent05]="--best-response checkpoint:$POLICIES/full_every_seat_ent05/policy"
  # the main job's network (default_recipe.sh full_default) and the 0.4 recipe's of the same steps
  # (default_recipe.sh full_pool_2p, whose policy is not kept in git: run that row first)
  [full_default]="--best-response checkpoint:$POLICIES/full_default/policy"
  [full_pool_2p]="--best-response checkpoint:$POLICIES/full_pool_2p/policy"
)
ORDER=(mini_random mini_heuristic mini_pool mini_pool_sampled mini_regularized mini_regularized_sampled
       small_random small_heuristic small_pool small_pool_sampled small_regularized small_regularized_sampled
       full_2p full_heuristic full_greedy full_2p-0.3 full_mixed full_magnet_ema full_magnet_ema_mb1024
       full_every_seat_ent05 mini_expert small_expert full_expert medium_default_sampled full_default full_pool_2p)

# The command that runs row $1 (a stopped run adds --resume).
row_command() {
  echo "rouba-train --run-dir $RUNS/$1 ${ROWS[$1]} --torch-threads 1 --no-progress"
}
run_rows "$@"
