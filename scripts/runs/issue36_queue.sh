#!/usr/bin/env bash
# Issue 36's training rows, run one after another on one core. Safe to start again after a stop:
# a run folder that holds a checkpoint is carried on with --resume (a finished run ends at once).
# They ran when the 0.4 pool recipe was the default: --config pool_2p gives its settings, the flags the rest.
# The rows with --play-average or --policy-loss neurd ran settings that lost and were removed since: this
# version refuses them (their results stay in scripts/results/runs/ and TRAINING_TRIES.md).
# Usage: scripts/runs/issue36_queue.sh [ROW ...]   (no argument: every row below, in order)
set -uo pipefail
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
SELF_PLAY="--scripted-weight 0 --past-self-weight 0 --self-play-weight 1"
declare -A ROWS=(
  # mini, 1M steps: four times as many (smaller) updates as row (12)'s mini run
  [mini_ent01_env256]="--rules mini --total-steps 1000000 --eval-interval 20 $SELF_PLAY --ent-coef 0.01 --num-envs 256"
  # mini: the entropy bonus annealed to 0 (uniform magnet, linear schedule), small updates
  [mini_annealed_env256]="--rules mini --total-steps 1000000 --eval-interval 20 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.02 --magnet-schedule linear --num-envs 256"
  # mini: row (12)'s mini run with small updates, playing the moving average of the weights
  [mini_ema_play]="--rules mini --total-steps 1000000 --eval-interval 20 $SELF_PLAY --ent-coef 0.01 --num-envs 256 --weight-average 0.99 --play-average"
  # mini: eight times as many updates as row (12)'s mini run
  [mini_ent01_env128]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0.01 --num-envs 128"
  # mini: the same, seeds 2 and 3
  [mini_ent01_env128_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0.01 --num-envs 128 --seed 2"
  [mini_ent01_env128_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0.01 --num-envs 128 --seed 3"
  # small, row (12) without every seat: which of the two changes did it
  [small_ent05_one_seat]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0.05 --every-seat off"
  # small, row (12) with the old entropy weight
  [small_every_seat_ent01]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0.01"
  # small, moving magnet (the moving average of the weights) with the mirror step
  [small_magnet_ema]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1"
  # mini: a higher entropy early, annealed to 0 (uniform magnet 0.05, linear), small updates, three seeds
  [mini_annealed05_env128]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule linear --num-envs 128"
  [mini_annealed05_env128_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule linear --num-envs 128 --seed 2"
  [mini_annealed05_env128_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule linear --num-envs 128 --seed 3"
  # the full game: the exploitability probe (0.3.0's budget) against row (16)'s network
  [probe_full_magnet]="--best-response checkpoint:scripts/results/runs/full_magnet_ema_24M/policy --architecture mlp --hidden-sizes 256 256"
  # small, row (18)'s moving magnet, seeds 2 and 3
  [small_magnet_ema_seed2]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --seed 2"
  # small, row (18)'s seed 1 carried on to 10M steps (the folder starts as a copy of small_magnet_ema: see COPY_OF)
  [small_magnet_ema_10M]="--rules small --total-steps 10000000 --eval-interval 20 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1"
  [small_magnet_ema_seed3]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --seed 3"
  # mini: the uniform magnet 0.05 decaying as a power law (fast early), small updates, three seeds
  [mini_power05_env128]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128"
  [mini_power05_env128_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --seed 2"
  [mini_power05_env128_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --seed 3"
  # mini: the same with a slower decay
  [mini_power03_env128]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.3 --num-envs 128"
  [mini_power03_env128_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.3 --num-envs 128 --seed 2"
  [mini_power03_env128_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.3 --num-envs 128 --seed 3"
  # mini: a higher start, the same power-law decay (it ends near entropy 0.01 at 0.2, 0.006 at 0.1)
  [mini_power20_env128]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.2 --magnet-schedule power --schedule-power 0.5 --num-envs 128"
  [mini_power20_env128_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.2 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --seed 2"
  [mini_power20_env128_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.2 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --seed 3"
  [mini_power10_env128_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.1 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --seed 3"
  # mini: the power-law magnet of 0.05 with a learning rate that ends at 0.0002 rather than 0, three seeds
  [mini_power05_lrfloor]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002"
  [mini_power05_lrfloor_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002 --seed 2"
  [mini_power05_lrfloor_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002 --seed 3"
  # mini: the power-law magnet from 0.2 with the learning-rate floor, three seeds
  [mini_power20_lrfloor]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.2 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002"
  [mini_power20_lrfloor_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.2 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002 --seed 2"
  [mini_power20_lrfloor_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.2 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002 --seed 3"
  # mini: the power-law magnet of 0.05 with the support term (KL(uniform || policy)) annealed to 0
  # (these need a tree with --support-coef: commit 77cda84 or later)
  [mini_support02_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.02 --support-schedule linear --seed 3"
  [mini_support005_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.005 --support-schedule linear --seed 3"
  [mini_support02]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.02 --support-schedule linear"
  [mini_support02_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.02 --support-schedule linear --seed 2"
  [mini_support005]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.005 --support-schedule linear"
  [mini_support005_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.005 --support-schedule linear --seed 2"
  [mini_support05p_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.05 --support-schedule power --seed 3"
  # mini: the support term only while the stalled seed's trap forms (linear from 0.02 to 0 over the first
  # 30% of the run), then the power-law magnet alone (a tree with --support-until)
  [mini_support02_until03]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.02 --support-schedule linear --support-until 0.3"
  [mini_support02_until03_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.02 --support-schedule linear --support-until 0.3 --seed 2"
  [mini_support02_until03_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --support-coef 0.02 --support-schedule linear --support-until 0.3 --seed 3"
  # mini: row (23)'s moving magnet with the mirror step, small updates, three seeds
  [mini_magnet_ema_env128]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --num-envs 128"
  [mini_magnet_ema_env128_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --num-envs 128 --seed 2"
  [mini_magnet_ema_env128_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --num-envs 128 --seed 3"
  # mixed (2, 3 and 4 players, the rank network padded to 4 seats): row (23)'s recipe, privileged critic
  [mixed_magnet_ema]="--config rank_mixed --critic privileged --total-steps 6000000 --eval-interval 20 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1"
  # the full game, 2 players: row (23)'s recipe from the start, privileged critic, 12M learner steps
  [full_magnet_ema]="--critic privileged --total-steps 12000000 --eval-interval 20 --eval-opponents heuristic checkpoint:2p $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1"
  # the full game: the exploitability probe (0.3.0's budget) against the network of full_magnet_ema
  [probe_full_magnet_ema]="--best-response checkpoint:scripts/results/runs/full_magnet_ema/policy --architecture mlp --hidden-sizes 256 256"
  # mixed: row (26) carried on to 12M steps (the folder starts as a copy of mixed_magnet_ema: see COPY_OF)
  # mini: rows (25)'s best two recipes with updates half as large again (64 games an update), three seeds
  [mini_power05_lrfloor_env64]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --learning-rate-floor 0.0002"
  [mini_power05_lrfloor_env64_seed2]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --learning-rate-floor 0.0002 --seed 2"
  [mini_power05_lrfloor_env64_seed3]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --learning-rate-floor 0.0002 --seed 3"
  [mini_support02_until03_env64]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --support-coef 0.02 --support-schedule linear --support-until 0.3"
  [mini_support02_until03_env64_seed2]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --support-coef 0.02 --support-schedule linear --support-until 0.3 --seed 2"
  [mini_support02_until03_env64_seed3]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --support-coef 0.02 --support-schedule linear --support-until 0.3 --seed 3"
  # mini: row (25)'s power-law magnet with the learning-rate floor, the NeuRD policy term in place of PPO's
  # (these need a tree with --policy-loss)
  [mini_neurd_power05]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002 --policy-loss neurd"
  [mini_neurd_power05_seed2]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002 --policy-loss neurd --seed 2"
  [mini_neurd_power05_seed3]="--rules mini --total-steps 1000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 128 --learning-rate-floor 0.0002 --policy-loss neurd --seed 3"
  # mini: the support term over the first 30% with updates of 32 games, three seeds
  [mini_support02_until03_env32]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --support-coef 0.02 --support-schedule linear --support-until 0.3"
  [mini_support02_until03_env32_seed2]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --support-coef 0.02 --support-schedule linear --support-until 0.3 --seed 2"
  [mini_support02_until03_env32_seed3]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --support-coef 0.02 --support-schedule linear --support-until 0.3 --seed 3"
  # mini: the NeuRD rows with updates of 64 games
  [mini_neurd_power05_env64]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --learning-rate-floor 0.0002 --policy-loss neurd"
  [mini_neurd_power05_env64_seed2]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --learning-rate-floor 0.0002 --policy-loss neurd --seed 2"
  [mini_neurd_power05_env64_seed3]="--rules mini --total-steps 1000000 --eval-interval 80 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 64 --learning-rate-floor 0.0002 --policy-loss neurd --seed 3"
  # mini: the same, seeds 4 and 5 (beyond the target's three), and the control without the support term
  [mini_support02_until03_env32_seed4]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --support-coef 0.02 --support-schedule linear --support-until 0.3 --seed 4"
  [mini_support02_until03_env32_seed5]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --support-coef 0.02 --support-schedule linear --support-until 0.3 --seed 5"
  [mini_power05_env32]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32"
  [mini_power05_env32_seed2]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --seed 2"
  [mini_power05_env32_seed3]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --seed 3"
  [mini_power05_env32_seed4]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --seed 4"
  [mini_power05_env32_seed5]="--rules mini --total-steps 1000000 --eval-interval 160 $SELF_PLAY --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule power --schedule-power 0.5 --num-envs 32 --seed 5"
  # small and the full game: row (23)'s and row (27)'s recipes with twice the gradient steps per decision
  # (minibatches of 1,024: mini's lesson, where more gradient steps per decision were the lever)
  [small_magnet_ema_mb1024]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --minibatch-size 1024"
  [small_magnet_ema_mb1024_seed2]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --minibatch-size 1024 --seed 2"
  [small_magnet_ema_mb1024_seed3]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --minibatch-size 1024 --seed 3"
  # small: row (23)'s recipe with updates of 256 games (mini's other lesson: more, smaller updates)
  [small_magnet_ema_env256]="--rules small --total-steps 3000000 --eval-interval 10 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --num-envs 256 --eval-interval 40"
  # small: the same with the moving average's decay per update scaled to keep its horizon in steps (0.99^(1/4))
  [small_magnet_ema_env256_wa9975]="--rules small --total-steps 3000000 --eval-interval 40 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.9975 --magnet-coef 0.05 --mirror-coef 0.1 --num-envs 256"
  [full_magnet_ema_mb1024]="--critic privileged --total-steps 12000000 --eval-interval 20 --eval-opponents heuristic checkpoint:2p $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --minibatch-size 1024"
  # mixed: row (26)'s recipe with 30% of the pool scripted (the shipped mixed was trained against 60%)
  [mixed_magnet_ema_scripted03]="--config rank_mixed --critic privileged --total-steps 6000000 --eval-interval 20 --scripted-weight 0.3 --past-self-weight 0 --self-play-weight 0.7 --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1"
  [mixed_magnet_ema_12M]="--config rank_mixed --critic privileged --total-steps 12000000 --eval-interval 20 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1"
  # small, row (23)'s seeds 2 and 3 carried on to 10M steps as seed 1 was: 3M steps as row (23) first
  # (FIRST_STAGE), then resumed with the longer total
  [small_magnet_ema_seed2_10M]="--rules small --total-steps 10000000 --eval-interval 20 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --seed 2"
  [small_magnet_ema_seed3_10M]="--rules small --total-steps 10000000 --eval-interval 20 $SELF_PLAY --ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1 --seed 3"
)
declare -A COPY_OF=([small_magnet_ema_10M]=small_magnet_ema [mixed_magnet_ema_12M]=mixed_magnet_ema)
declare -A FIRST_STAGE=([small_magnet_ema_seed2_10M]=small_magnet_ema_seed2 [small_magnet_ema_seed3_10M]=small_magnet_ema_seed3)
ORDER=(mini_ent01_env256 mini_annealed_env256 small_ent05_one_seat small_every_seat_ent01 small_magnet_ema
       mini_ema_play mini_ent01_env128 mini_ent01_env128_seed2 mini_ent01_env128_seed3
       mini_annealed05_env128 mini_annealed05_env128_seed2 mini_annealed05_env128_seed3 probe_full_magnet
       small_magnet_ema_seed2 small_magnet_ema_seed3 small_magnet_ema_10M
       mini_power05_env128 mini_power03_env128 mini_magnet_ema_env128 mini_power05_env128_seed2
       mini_power05_env128_seed3 mini_power03_env128_seed2 mini_power03_env128_seed3
       mini_magnet_ema_env128_seed2 mini_magnet_ema_env128_seed3 mixed_magnet_ema full_magnet_ema
       mini_power20_env128_seed3 mini_power10_env128_seed3 mini_power20_env128 mini_power20_env128_seed2
       mini_power05_lrfloor_seed2 mini_power05_lrfloor mini_power05_lrfloor_seed3
       mini_power20_lrfloor_seed3 mini_power20_lrfloor_seed2 mini_power20_lrfloor
       mini_support02_seed3 mini_support005_seed3 mini_support02 mini_support02_seed2 mini_support005
       mini_support005_seed2 mini_support05p_seed3 probe_full_magnet_ema
       mini_support02_until03_seed3 mini_support02_until03 mini_support02_until03_seed2 mixed_magnet_ema_12M
       small_magnet_ema_seed2_10M small_magnet_ema_seed3_10M
       mini_power05_lrfloor_env64 mini_power05_lrfloor_env64_seed2 mini_power05_lrfloor_env64_seed3
       mini_support02_until03_env64 mini_support02_until03_env64_seed2 mini_support02_until03_env64_seed3
       mini_neurd_power05_seed3 mini_neurd_power05 mini_neurd_power05_seed2
       mini_support02_until03_env32_seed3 mini_support02_until03_env32 mini_support02_until03_env32_seed2
       mini_neurd_power05_env64_seed3 mini_neurd_power05_env64 mini_neurd_power05_env64_seed2
       mini_support02_until03_env32_seed4 mini_support02_until03_env32_seed5
       mini_power05_env32_seed3 mini_power05_env32 mini_power05_env32_seed2 mini_power05_env32_seed4 mini_power05_env32_seed5
       small_magnet_ema_mb1024 full_magnet_ema_mb1024
       small_magnet_ema_mb1024_seed2 small_magnet_ema_mb1024_seed3 small_magnet_ema_env256
       small_magnet_ema_env256_wa9975 mixed_magnet_ema_scripted03)
[ $# -gt 0 ] && ORDER=("$@")
for row in "${ORDER[@]}"; do
  flags=${ROWS[$row]:?unknown row $row}
  dir=$RUNS/$row
  if [ -n "${COPY_OF[$row]:-}" ] && [ ! -d "$dir" ]; then cp -r "$RUNS/${COPY_OF[$row]}" "$dir"; fi
  if [ -n "${FIRST_STAGE[$row]:-}" ]; then
    # the first stage ends at once when it is done (or the run is past it)
    if [ -f "$dir/checkpoint.pt" ]; then resume=--resume; else resume=; fi
    echo "=== $row: first stage ${FIRST_STAGE[$row]} $(date -u +%FT%TZ)"
    # shellcheck disable=SC2086
    rouba-train $resume --config pool_2p --run-dir "$dir" ${ROWS[${FIRST_STAGE[$row]}]} --torch-threads 1 --no-progress \
      || { echo "=== $row failed in its first stage: $?"; continue; }
  fi
  if [ -f "$dir/checkpoint.pt" ]; then resume=--resume; else resume=; fi
  echo "=== $row $(date -u +%FT%TZ)"
  # shellcheck disable=SC2086
  rouba-train $resume --config pool_2p --run-dir "$dir" $flags --torch-threads 1 --no-progress || echo "=== $row failed: $?"
done
