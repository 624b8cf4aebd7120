#!/usr/bin/env bash
# Issue 49's runs for the exact benchmark table (scripts/exact_table.py): the default recipe and the 0.4 pool
# recipe on mini, small and medium, 10M learner steps, three seeds each (the exact NashConv at 1M, 3M and 10M is
# read from each run's eval.csv); the scripted players' exact NashConv on medium; CFR+ and MMD by iterations.
# One after another on one core; safe to start again after a stop (a run folder with a checkpoint is carried on
# with --resume; a finished run ends at once; a written solver file is skipped).
# Usage: scripts/runs/issue49_queue.sh [ROW ...]   (no argument: every row of ORDER below, in order)
# Run it from a detached worktree so that edits to the main tree do not change a run under way, e.g.
#   git worktree add --detach ../wt HEAD && cd ../wt && PYTHONPATH=<folder linking rouba_env and rouba_training
#   to this tree> taskset -c 1 nohup bash scripts/runs/issue49_queue.sh > ../queue.log 2>&1 &
# and copy each finished run's eval.csv and final_eval.json back (a medium run's metrics.csv and policy too;
# a long run's checkpoint.pt while it is to be resumed, named in tests/test_repository.py's TO_BE_RESUMED);
# the table then comes from python scripts/exact_table.py.
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
  [medium_3M_nomagnet]="--rules medium --total-steps 3000000 --magnet none --magnet-coef 0"
  [medium_3M_epochs8]="--rules medium --total-steps 3000000 --update-epochs 8"
  # ... and of the advantage: GAE's bias from an imperfect critic, and a weaker magnet still
  [medium_3M_lambda1]="--rules medium --total-steps 3000000 --gae-lambda 1.0"
  [medium_3M_magnet003]="--rules medium --total-steps 3000000 --magnet-coef 0.003"
  # ... and of the amount of optimization per sample, the entropy bonus, and a step size that does not fade
  [medium_3M_mb1024]="--rules medium --total-steps 3000000 --minibatch-size 1024"
  [medium_3M_envs256]="--rules medium --total-steps 3000000 --num-envs 256"
  [medium_3M_ent01]="--rules medium --total-steps 3000000 --ent-coef 0.01"
  [medium_3M_constant_lr]="--rules medium --total-steps 3000000 --learning-rate 3e-4 --learning-rate-schedule constant --magnet-coef 0.01"
  # the best single change of the screens (a weaker magnet) at 10M steps, three seeds, for the table
  [medium_magnet01_10M]="--rules medium --total-steps $STEPS --magnet-coef 0.01"
  [medium_magnet01_10M_seed2]="--rules medium --total-steps $STEPS --magnet-coef 0.01 --seed 2"
  [medium_magnet01_10M_seed3]="--rules medium --total-steps $STEPS --magnet-coef 0.01 --seed 3"
  # four times the batch for the whole 10M steps: fewer updates, each less noisy (the exact-value check in
  # scripts/capacity_check.py falls to 0.016 in 90 noiseless updates)
  [medium_envs4096_10M]="--rules medium --total-steps $STEPS --num-envs 4096"
  # the mirror fit: an action-value head, and each update fits the policy to the closed-form mirror step
  # (scripts/capacity_check.py --exact-fit: with exact values that step, fitted, reaches 0.0099 in 50 steps)
  [medium_3M_mirror_fit]="--rules medium --total-steps 3000000 --policy-objective mirror_fit --mirror-coef 1"
  [medium_3M_mirror_fit_step3]="--rules medium --total-steps 3000000 --policy-objective mirror_fit --mirror-coef 0.3"
  [medium_3M_mirror_fit_step10]="--rules medium --total-steps 3000000 --policy-objective mirror_fit"
  # the mirror fit's action values taught by a privileged critic's (which see the hidden cards), every legal move
  [medium_3M_mirror_fit_privileged]="--rules medium --total-steps 3000000 --policy-objective mirror_fit --mirror-coef 1 --critic privileged"
  [medium_3M_mirror_fit_privileged_step3]="--rules medium --total-steps 3000000 --policy-objective mirror_fit --mirror-coef 0.3 --critic privileged"
  [medium_3M_mirror_fit_privileged_step10]="--rules medium --total-steps 3000000 --policy-objective mirror_fit --mirror-coef 0.1 --critic privileged"
  # the exact solver's cost and CFR+'s curve (scripts/results/solver_medium.json); MMD's (mmd_medium.json)
  [solver_medium]="--rules medium --cfr 2000"
  [mmd_medium]="--rules medium --mmd 1000"
  [solver_mini]="--rules mini --cfr 1000 --mmd 1000"
  [solver_small]="--rules small --cfr 1000 --mmd 1000"
  # the scripted players' exact NashConv on medium (scripts/results/exploitability_medium*.json)
  [exploitability_medium]="--rules medium --players random greedy heuristic"
  # expert's exact probabilities on medium: 1.5-2 s an information set on one core, ~280 hours in all
  [exploitability_medium_expert]="--rules medium --players expert"
)
for deck in mini small; do
  for seed in 1 2 3; do
    suffix=$([ $seed = 1 ] || echo _seed$seed)
    ROWS[${deck}_default_10M$suffix]="--rules $deck --total-steps $STEPS --seed $seed"
    ROWS[${deck}_pool_10M$suffix]="--rules $deck --total-steps $STEPS --config pool_2p --seed $seed"
  done
done
ORDER=(solver_medium medium_default medium_pool medium_default_seed2 medium_pool_seed2 medium_default_seed3
       medium_pool_seed3 exploitability_medium solver_mini solver_small medium_3M_nomagnet medium_3M_epochs8
       mini_default_10M mini_default_10M_seed2 mini_default_10M_seed3 small_default_10M small_default_10M_seed2
       small_default_10M_seed3 mini_pool_10M mini_pool_10M_seed2 mini_pool_10M_seed3 small_pool_10M
       small_pool_10M_seed2 small_pool_10M_seed3 exploitability_medium_expert)
[ $# -gt 0 ] && ORDER=("$@")
for row in "${ORDER[@]}"; do
  flags=${ROWS[$row]?unknown row $row}
  if [[ $row == solver_* || $row == mmd_* || $row == exploitability_* ]]; then
    out=scripts/results/$row.json
    [ -f "$out" ] && { echo "=== $row: done"; continue; }
    echo "=== $row $(date -u +%FT%TZ)"
    if [[ $row == exploitability_* ]]; then
      # shellcheck disable=SC2086
      rouba-exploitability $flags --json "$out" || echo "=== $row failed: $?"
    else
      # shellcheck disable=SC2086
      python scripts/solver_scale.py $flags --json "$out" || echo "=== $row failed: $?"
    fi
    continue
  fi
  dir=$RUNS/$row
  [ -f "$dir/final_eval.json" ] && { echo "=== $row: done"; continue; }  # finished (its results kept in git)
  if [ -f "$dir/checkpoint.pt" ]; then resume=--resume; else resume=; fi
  echo "=== $row $(date -u +%FT%TZ)"
  # shellcheck disable=SC2086
  rouba-train $resume --run-dir "$dir" $flags --torch-threads 1 --no-progress || echo "=== $row failed: $?"
done
