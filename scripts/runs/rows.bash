# shellcheck shell=bash
# The rows loop the scripts of scripts/runs/ share: sourced by each, not a runner of its own.
# run_rows checks the rows asked for, then lists them (ROWS_ONLY=1) or runs them one after another.
# A script sources this file first, sets ROWS (row name -> its flags), ORDER (the rows to run, in order) and RUNS
# (the folder of its run folders), defines row_command ROW (the command that runs ROW) and calls run_rows "$@" (rows
# named on its command line replace ORDER). It may redefine these, after sourcing this file:
#   row_done ROW    true when ROW is finished: it is skipped ("=== ROW: done")
#   row_start ROW   runs before ROW (a folder to copy, a first stage); false skips ROW
#   row_resume ROW  the flag that carries a stopped run on (here: --resume when RUNS/ROW holds a checkpoint)
#   before_rows     runs once before the first row (not with ROWS_ONLY)
row_done() { false; }
row_start() { :; }
row_resume() { if [ -f "$RUNS/$1/checkpoint.pt" ]; then echo --resume; fi; }
before_rows() { :; }

run_rows() {
  local row resume
  [ $# -gt 0 ] && ORDER=("$@")
  for row in "${ORDER[@]}"; do
    [ -n "${ROWS[$row]+set}" ] || { echo "unknown row $row" >&2; exit 2; }
  done
  if [ -n "${ROWS_ONLY:-}" ]; then
    for row in "${!ROWS[@]}"; do printf '%s\t%s\n' "$row" "$(row_command "$row")"; done
    exit 0
  fi
  before_rows
  for row in "${ORDER[@]}"; do
    row_done "$row" && { echo "=== $row: done"; continue; }
    row_start "$row" || continue
    resume=$(row_resume "$row")
    echo "=== $row $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
    # shellcheck disable=SC2046,SC2086
    $(row_command "$row") $resume || echo "=== $row failed: $?"
  done
}
