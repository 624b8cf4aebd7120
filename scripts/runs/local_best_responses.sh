#!/usr/bin/env bash
# The local best responses of docs/exploitability.md's tables (rouba-exploitability --lbr), the target's own policy
# as the rollout, WORLDS worlds a move (16, the default). Each row writes scripts/results/lbr/ROW.json (at another
# WORLDS, scripts/results/lbr_WORLDSworlds/ROW.json); a row whose file exists is skipped, so the script can be
# started again. One after another on one core.
# Usage: [WORLDS=8] scripts/runs/local_best_responses.sh [ROW ...]   (no argument: every row of ORDER below, in order)
#        ROWS_ONLY=1 scripts/runs/local_best_responses.sh  (each row's name and command, tab-separated; runs nothing)
# The table of results: python scripts/exploiter_table.py (docs/exploitability.md).
set -uo pipefail
source "$(dirname "$0")/rows.bash"
cd "$(dirname "$0")/../.."
WORLDS=${WORLDS:-16}
if [ "$WORLDS" = 16 ]; then OUT=scripts/results/lbr; else OUT=scripts/results/lbr_${WORLDS}worlds; fi
POLICIES=scripts/results/runs
SOLVED=4000   # games on mini and small (both seatings of 2,000 deals)
FULL=2000     # games on the full game
EXPERT=1000   # the expert searches at every move of every playout: fewer games (no full-game row: about 10 s a decision)
declare -A ROWS=(
  [mini_random]="--rules mini --players random --lbr $SOLVED"
  [mini_heuristic]="--rules mini --players heuristic --lbr $SOLVED"
  [mini_pool]="--rules mini --players checkpoint:$POLICIES/mini/policy --lbr $SOLVED"
  [mini_pool_sampled]="--rules mini --players checkpoint:$POLICIES/mini/policy,deterministic=false --lbr $SOLVED"
  [mini_regularized]="--rules mini --players checkpoint:$POLICIES/mini_support02_until03_env32/policy --lbr $SOLVED"
  [mini_regularized_sampled]="--rules mini --players checkpoint:$POLICIES/mini_support02_until03_env32/policy,deterministic=false --lbr $SOLVED"
  [mini_expert]="--rules mini --players expert --lbr $EXPERT"
  [small_expert]="--rules small --players expert --lbr $EXPERT"
  [small_random]="--rules small --players random --lbr $SOLVED"
  [small_heuristic]="--rules small --players heuristic --lbr $SOLVED"
  [small_pool]="--rules small --players checkpoint:$POLICIES/small/policy --lbr $SOLVED"
  [small_pool_sampled]="--rules small --players checkpoint:$POLICIES/small/policy,deterministic=false --lbr $SOLVED"
  [small_regularized]="--rules small --players checkpoint:$POLICIES/small_magnet_ema_10M/policy --lbr $SOLVED"
  [small_regularized_sampled]="--rules small --players checkpoint:$POLICIES/small_magnet_ema_10M/policy,deterministic=false --lbr $SOLVED"
  # medium: the default recipe's network as it learns (sampling), beside its exact NashConv
  [medium_default_sampled]="--rules medium --players checkpoint:$POLICIES/medium_default/policy,deterministic=false --lbr $SOLVED"
  [full_heuristic]="--rules standard --players heuristic --lbr $FULL"
  [full_greedy]="--rules standard --players greedy --lbr $FULL"
  [full_2p-0.3]="--rules standard --players checkpoint:2p-0.3 --lbr $FULL"
  [full_2p]="--rules standard --players checkpoint:2p --lbr $FULL"
  [full_mixed]="--rules standard --players checkpoint:mixed --lbr $FULL"
  [full_magnet_ema]="--rules standard --players checkpoint:$POLICIES/full_magnet_ema/policy --lbr $FULL"
  [full_magnet_ema_mb1024]="--rules standard --players checkpoint:$POLICIES/full_magnet_ema_mb1024/policy --lbr $FULL"
  [full_every_seat_ent05]="--rules standard --players checkpoint:$POLICIES/full_every_seat_ent05/policy --lbr $FULL"
  # the main job's network (default_recipe.sh full_default) and the 0.4 recipe's of the same steps
  # (default_recipe.sh full_pool_2p, whose policy is not kept in git: run that row first)
  [full_default]="--rules standard --players checkpoint:$POLICIES/full_default/policy --lbr $FULL"
  [full_pool_2p]="--rules standard --players checkpoint:$POLICIES/full_pool_2p/policy --lbr $FULL"
)
ORDER=(mini_random mini_heuristic mini_pool mini_pool_sampled mini_regularized mini_regularized_sampled
       small_random small_heuristic small_pool small_pool_sampled small_regularized small_regularized_sampled
       full_2p full_heuristic full_greedy full_2p-0.3 full_mixed full_magnet_ema full_magnet_ema_mb1024
       full_every_seat_ent05 mini_expert small_expert medium_default_sampled full_default full_pool_2p)

# The command that runs row $1.
row_command() {
  echo "rouba-exploitability ${ROWS[$1]} --lbr-worlds $WORLDS --json $OUT/$1.json --no-progress"
}
row_done() { [ -f "$OUT/$1.json" ]; }
row_resume() { :; }  # nothing to resume: a row's file is written at its end
before_rows() { mkdir -p "$OUT"; }
run_rows "$@"
