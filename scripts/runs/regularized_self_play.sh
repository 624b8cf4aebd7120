#!/usr/bin/env bash
# The regularized self-play recipes of scripts/results/TRAINING_TRIES.md rows (14)-(33) ("Toward an equilibrium"):
# entropy, annealed and power-law uniform magnets, the support term, the moving magnet with the mirror step, on
# mini, small, mixed and the full game, and the exploitability probes of two full-game networks. One after another
# on one core; safe to start again after a stop (a run folder that holds a checkpoint is carried on with --resume;
# a finished run ends at once).
# Each row's flags go on the 0.4 pool recipe (--config pool_2p), the defaults the runs were made with; a row that
# names its own config, or an exploiter (which plays its target alone), takes none. The runs of settings today's
# trainer refuses have no row: scripts/results/RUNS.md marks them and names their commit.
# Usage: scripts/runs/regularized_self_play.sh [ROW ...]   (no argument: every row of ORDER below, in order)
#        ROWS_ONLY=1 scripts/runs/regularized_self_play.sh    (each row's name and command, tab-separated; runs nothing)
set -uo pipefail
source "$(dirname "$0")/rows.bash"
cd "$(dirname "$0")/../.."
RUNS=scripts/results/runs
SELF_PLAY="--scripted-weight 0 --past-self-weight 0 --self-play-weight 1"
MINI="--rules mini --total-steps 1000000 $SELF_PLAY"
SMALL="--rules small $SELF_PLAY"
MOVING_MAGNET="--ent-coef 0 --magnet ema --weight-average 0.99 --magnet-coef 0.05 --mirror-coef 0.1"
POWER="--ent-coef 0 --magnet uniform --magnet-schedule power"  # then --magnet-coef and --schedule-power
POWER05="$POWER --magnet-coef 0.05 --schedule-power 0.5"
SUPPORT_EARLY="--support-coef 0.02 --support-schedule linear --support-until 0.3"
LR_FLOOR="--learning-rate-floor 0.0002"
declare -A ROWS=(
  # mini, 1M steps: four times as many (smaller) updates as row (12)'s mini run
  [mini_ent01_env256]="$MINI --eval-interval 20 --ent-coef 0.01 --num-envs 256"
  # mini: the entropy bonus annealed to 0 (uniform magnet, linear schedule), small updates
  [mini_annealed_env256]="$MINI --eval-interval 20 --ent-coef 0 --magnet uniform --magnet-coef 0.02 --magnet-schedule linear --num-envs 256"
  # small, row (12) without every seat: which of the two changes did it
  [small_ent05_one_seat]="$SMALL --total-steps 3000000 --eval-interval 10 --ent-coef 0.05 --every-seat off"
  # small, row (12) with the old entropy weight
  [small_every_seat_ent01]="$SMALL --total-steps 3000000 --eval-interval 10 --ent-coef 0.01"
  # the full game: the exploitability probe at 0.3.0's budget (a fresh network, 3M steps, the entropy bonus of the
  # time) against row (16)'s network, and against the network of full_magnet_ema
  [probe_full_magnet]="--best-response checkpoint:$RUNS/full_magnet_ema_24M/policy --best-response-start fresh --ent-coef 0.01 --architecture mlp --hidden-sizes 256 256"
  [probe_full_magnet_ema]="--best-response checkpoint:$RUNS/full_magnet_ema/policy --best-response-start fresh --ent-coef 0.01 --architecture mlp --hidden-sizes 256 256"
  # small, row (18)'s seed 1 carried on to 10M steps (the folder starts as a copy of small_magnet_ema: see COPY_OF)
  [small_magnet_ema_10M]="$SMALL --total-steps 10000000 --eval-interval 20 $MOVING_MAGNET"
  # mixed (2, 3 and 4 players, the rank network padded to 4 seats): row (23)'s recipe, privileged critic; carried
  # on to 12M steps (the folder starts as a copy of mixed_magnet_ema: see COPY_OF)
  [mixed_magnet_ema]="--config rank_mixed --critic privileged --total-steps 6000000 --eval-interval 20 $SELF_PLAY $MOVING_MAGNET"
  [mixed_magnet_ema_12M]="--config rank_mixed --critic privileged --total-steps 12000000 --eval-interval 20 $SELF_PLAY $MOVING_MAGNET"
  # mixed: row (26)'s recipe with 30% of the pool scripted (the shipped mixed was trained against 60%)
  [mixed_magnet_ema_scripted03]="--config rank_mixed --critic privileged --total-steps 6000000 --eval-interval 20 --scripted-weight 0.3 --past-self-weight 0 --self-play-weight 0.7 $MOVING_MAGNET"
  # the full game, 2 players: row (23)'s recipe from the start, privileged critic, 12M learner steps; and with
  # twice the gradient steps per decision (minibatches of 1,024)
  [full_magnet_ema]="--critic privileged --total-steps 12000000 --eval-interval 20 --eval-opponents heuristic checkpoint:2p $SELF_PLAY $MOVING_MAGNET"
  [full_magnet_ema_mb1024]="--critic privileged --total-steps 12000000 --eval-interval 20 --eval-opponents heuristic checkpoint:2p $SELF_PLAY $MOVING_MAGNET --minibatch-size 1024"
  # small: row (23)'s recipe with updates of 256 games (mini's other lesson: more, smaller updates), and the same
  # with the moving average's decay per update scaled to keep its horizon in steps (0.99^(1/4))
  [small_magnet_ema_env256]="$SMALL --total-steps 3000000 --eval-interval 40 $MOVING_MAGNET --num-envs 256"
  [small_magnet_ema_env256_wa9975]="$SMALL --total-steps 3000000 --eval-interval 40 --ent-coef 0 --magnet ema --weight-average 0.9975 --magnet-coef 0.05 --mirror-coef 0.1 --num-envs 256"
)

# Rows of one recipe over seeds: NAME (seed 1) and NAME_seedN (seed N) run FLAGS --seed N, for each seed given.
with_seeds() {
  local name=$1 flags=$2 seed
  shift 2
  for seed in "$@"; do
    ROWS[$name$([ "$seed" = 1 ] || echo "_seed$seed")]="$flags --seed $seed"
  done
}
# mini: eight times as many updates as row (12)'s mini run
with_seeds mini_ent01_env128 "$MINI --eval-interval 40 --ent-coef 0.01 --num-envs 128" 1 2 3
# mini: a higher entropy early, annealed to 0 (uniform magnet 0.05, linear), small updates
with_seeds mini_annealed05_env128 "$MINI --eval-interval 40 --ent-coef 0 --magnet uniform --magnet-coef 0.05 --magnet-schedule linear --num-envs 128" 1 2 3
# small: moving magnet (the moving average of the weights) with the mirror step (rows 18 and 23)
with_seeds small_magnet_ema "$SMALL --total-steps 3000000 --eval-interval 10 $MOVING_MAGNET" 1 2 3
# mini: the uniform magnet 0.05 decaying as a power law (fast early), small updates; a slower decay; a higher start
# (it ends near entropy 0.01 at 0.2, 0.006 at 0.1)
with_seeds mini_power05_env128 "$MINI --eval-interval 40 $POWER05 --num-envs 128" 1 2 3
with_seeds mini_power03_env128 "$MINI --eval-interval 40 $POWER --magnet-coef 0.05 --schedule-power 0.3 --num-envs 128" 1 2 3
with_seeds mini_power20_env128 "$MINI --eval-interval 40 $POWER --magnet-coef 0.2 --schedule-power 0.5 --num-envs 128" 1 2 3
with_seeds mini_power10_env128 "$MINI --eval-interval 40 $POWER --magnet-coef 0.1 --schedule-power 0.5 --num-envs 128" 3
# mini: the power-law magnet of 0.05, and from 0.2, with a learning rate that ends at 0.0002 rather than 0
with_seeds mini_power05_lrfloor "$MINI --eval-interval 40 $POWER05 --num-envs 128 $LR_FLOOR" 1 2 3
with_seeds mini_power20_lrfloor "$MINI --eval-interval 40 $POWER --magnet-coef 0.2 --schedule-power 0.5 --num-envs 128 $LR_FLOOR" 1 2 3
# mini: the power-law magnet of 0.05 with the support term (KL(uniform || policy)) annealed to 0
with_seeds mini_support02 "$MINI --eval-interval 40 $POWER05 --num-envs 128 --support-coef 0.02 --support-schedule linear" 1 2 3
with_seeds mini_support005 "$MINI --eval-interval 40 $POWER05 --num-envs 128 --support-coef 0.005 --support-schedule linear" 1 2 3
with_seeds mini_support05p "$MINI --eval-interval 40 $POWER05 --num-envs 128 --support-coef 0.05 --support-schedule power" 3
# mini: the support term only while the stalled seed's trap forms (linear from 0.02 to 0 over the first 30% of the
# run), then the power-law magnet alone; at 128, 64 and 32 games an update (32: seeds 4 and 5 too)
with_seeds mini_support02_until03 "$MINI --eval-interval 40 $POWER05 --num-envs 128 $SUPPORT_EARLY" 1 2 3
with_seeds mini_support02_until03_env64 "$MINI --eval-interval 80 $POWER05 --num-envs 64 $SUPPORT_EARLY" 1 2 3
with_seeds mini_support02_until03_env32 "$MINI --eval-interval 160 $POWER05 --num-envs 32 $SUPPORT_EARLY" 1 2 3 4 5
# mini: row (23)'s moving magnet with the mirror step, small updates
with_seeds mini_magnet_ema_env128 "$MINI --eval-interval 40 $MOVING_MAGNET --num-envs 128" 1 2 3
# mini: row (25)'s power-law magnet with the learning-rate floor at 64 games an update; and the control of the
# support rows at 32 games, without the support term
with_seeds mini_power05_lrfloor_env64 "$MINI --eval-interval 80 $POWER05 --num-envs 64 $LR_FLOOR" 1 2 3
with_seeds mini_power05_env32 "$MINI --eval-interval 160 $POWER05 --num-envs 32" 1 2 3 4 5
# small: row (23)'s recipe with twice the gradient steps per decision (minibatches of 1,024: mini's lesson, where
# more gradient steps per decision were the lever)
with_seeds small_magnet_ema_mb1024 "$SMALL --total-steps 3000000 --eval-interval 10 $MOVING_MAGNET --minibatch-size 1024" 1 2 3
# small, row (23)'s seeds 2 and 3 carried on to 10M steps as seed 1 was: 3M steps as row (23) first (FIRST_STAGE),
# then resumed with the longer total
declare -A COPY_OF=([small_magnet_ema_10M]=small_magnet_ema [mixed_magnet_ema_12M]=mixed_magnet_ema)
declare -A FIRST_STAGE=()
for seed in 2 3; do
  ROWS[small_magnet_ema_seed${seed}_10M]="$SMALL --total-steps 10000000 --eval-interval 20 $MOVING_MAGNET --seed $seed"
  FIRST_STAGE[small_magnet_ema_seed${seed}_10M]=small_magnet_ema_seed$seed
done
ORDER=(mini_ent01_env256 mini_annealed_env256 small_ent05_one_seat small_every_seat_ent01 small_magnet_ema
       mini_ent01_env128{,_seed2,_seed3} mini_annealed05_env128{,_seed2,_seed3} probe_full_magnet
       small_magnet_ema_seed2 small_magnet_ema_seed3 small_magnet_ema_10M
       mini_power05_env128 mini_power03_env128 mini_magnet_ema_env128 mini_power05_env128{_seed2,_seed3}
       mini_power03_env128{_seed2,_seed3} mini_magnet_ema_env128{_seed2,_seed3} mixed_magnet_ema full_magnet_ema
       mini_power20_env128_seed3 mini_power10_env128_seed3 mini_power20_env128{,_seed2}
       mini_power05_lrfloor{_seed2,,_seed3} mini_power20_lrfloor{_seed3,_seed2,}
       mini_support02_seed3 mini_support005_seed3 mini_support02{,_seed2} mini_support005{,_seed2}
       mini_support05p_seed3 probe_full_magnet_ema mini_support02_until03{_seed3,,_seed2} mixed_magnet_ema_12M
       small_magnet_ema_seed2_10M small_magnet_ema_seed3_10M mini_power05_lrfloor_env64{,_seed2,_seed3}
       mini_support02_until03_env64{,_seed2,_seed3} mini_support02_until03_env32{_seed3,,_seed2,_seed4,_seed5}
       mini_power05_env32{_seed3,,_seed2,_seed4,_seed5} small_magnet_ema_mb1024 full_magnet_ema_mb1024
       small_magnet_ema_mb1024{_seed2,_seed3} small_magnet_ema_env256 small_magnet_ema_env256_wa9975
       mixed_magnet_ema_scripted03)

# The command that runs row $1 in its folder, or in folder $2 (a stopped run adds --resume).
row_command() {
  local flags=${ROWS[$1]}
  case " $flags " in
    *" --config "* | *" --best-response "*) ;;
    *) flags="--config pool_2p $flags" ;;
  esac
  echo "rouba-train --run-dir ${2:-$RUNS/$1} $flags --torch-threads 1 --no-progress"
}
# Before row $1: its folder copied from COPY_OF's, and its FIRST_STAGE run in that folder (a failure skips the row).
row_start() {
  local dir=$RUNS/$1
  if [ -n "${COPY_OF[$1]:-}" ] && [ ! -d "$dir" ]; then cp -r "$RUNS/${COPY_OF[$1]}" "$dir"; fi
  if [ -n "${FIRST_STAGE[$1]:-}" ]; then
    # the first stage, in this row's folder, ends at once when it is done (or the run is past it)
    echo "=== $1: first stage ${FIRST_STAGE[$1]} $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
    # shellcheck disable=SC2046
    $(row_command "${FIRST_STAGE[$1]}" "$dir") $(row_resume "$1") \
      || { echo "=== $1 failed in its first stage: $?"; return 1; }
  fi
}
run_rows "$@"
