#!/usr/bin/env bash
# What holds the default recipe at NashConv 0.03 on medium (docs/solving.md): 3M-step screens of one change each
# to its regularizer (the magnet), network, critic, batch, step size, advantage and policy objective (the mirror
# fit), against the default itself; and at 10M steps a wider network, four times the batch and the best single
# change (a weaker magnet) over three seeds. One after another on one core; safe to start again after a stop (a
# run folder with a checkpoint is carried on with --resume; a finished run ends at once).
# Usage: scripts/runs/medium_screens.sh [ROW ...]   (no argument: every row, in name order)
#        ROWS_ONLY=1 scripts/runs/medium_screens.sh    (each row's name and command, tab-separated; runs nothing)
# Run it from a detached worktree, as scripts/runs/exact_table.sh says.
set -uo pipefail
source "$(dirname "$0")/rows.bash"
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
SCREEN="--rules medium --total-steps 3000000"
declare -A ROWS=(
  [medium_3M_default]="$SCREEN"
  # the regularizer (the magnet)
  [medium_3M_magnet_linear]="$SCREEN --magnet-schedule linear"
  [medium_3M_magnet01]="$SCREEN --magnet-coef 0.01"
  [medium_3M_magnet003]="$SCREEN --magnet-coef 0.003"
  [medium_3M_nomagnet]="$SCREEN --magnet none --magnet-coef 0"
  # the network, the critic, the batch and the step size
  [medium_3M_mlp]="$SCREEN --architecture mlp --hidden-sizes 256 256"
  [medium_3M_privileged]="$SCREEN --critic privileged"
  [medium_3M_envs4096]="$SCREEN --num-envs 4096"
  [medium_3M_envs256]="$SCREEN --num-envs 256"
  [medium_3M_lr3e-4]="$SCREEN --learning-rate 3e-4"
  [medium_3M_constant_lr]="$SCREEN --learning-rate 3e-4 --learning-rate-schedule constant --magnet-coef 0.01"
  # the amount of optimization per sample, the entropy bonus, the advantage (GAE's bias from an imperfect critic)
  [medium_3M_epochs8]="$SCREEN --update-epochs 8"
  [medium_3M_mb1024]="$SCREEN --minibatch-size 1024"
  [medium_3M_ent01]="$SCREEN --ent-coef 0.01"
  [medium_3M_lambda1]="$SCREEN --gae-lambda 1.0"
  # the mirror fit: an action-value head, and each update fits the policy to the closed-form mirror step
  # (scripts/capacity_check.py --exact-fit: with exact values that step, fitted, reaches 0.0099 in 50 steps);
  # its action values taught by a privileged critic's (which see the hidden cards), every legal move
  [medium_3M_mirror_fit]="$SCREEN --policy-objective mirror_fit --mirror-coef 1"
  [medium_3M_mirror_fit_step3]="$SCREEN --policy-objective mirror_fit --mirror-coef 0.3"
  [medium_3M_mirror_fit_step10]="$SCREEN --policy-objective mirror_fit"
  [medium_3M_mirror_fit_privileged]="$SCREEN --policy-objective mirror_fit --mirror-coef 1 --critic privileged"
  [medium_3M_mirror_fit_privileged_step3]="$SCREEN --policy-objective mirror_fit --mirror-coef 0.3 --critic privileged"
  [medium_3M_mirror_fit_privileged_step10]="$SCREEN --policy-objective mirror_fit --mirror-coef 0.1 --critic privileged"
  # 10M steps: a wider network (does capacity limit the recipe?); four times the batch for the whole run (fewer
  # updates, each less noisy: the exact-value check in scripts/capacity_check.py falls to 0.016 in 90 noiseless
  # updates)
  [medium_wide]="--rules medium --total-steps 10000000 --hidden-sizes 256 128"
  [medium_envs4096_10M]="--rules medium --total-steps 10000000 --num-envs 4096"
)
# the best single change of the screens (a weaker magnet) at 10M steps, three seeds
for seed in 1 2 3; do
  ROWS[medium_magnet01_10M$([ $seed = 1 ] || echo _seed$seed)]="--rules medium --total-steps 10000000 --magnet-coef 0.01 --seed $seed"
done
mapfile -t ORDER < <(printf '%s\n' "${!ROWS[@]}" | sort)

# The command that runs row $1 (a stopped run adds --resume).
row_command() {
  echo "rouba-train --run-dir $RUNS/$1 ${ROWS[$1]} --torch-threads 1 --no-progress"
}
row_done() { [ -f "$RUNS/$1/final_eval.json" ]; }  # finished (its results kept in git)
run_rows "$@"
