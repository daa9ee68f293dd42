# Shared helpers of the script tests: sourced with TF (binary), SRC (tree), WORK (scratch).
set -euo pipefail
TF="$1"
SRC="$2"
WORK="$3"
rm -rf "$WORK"
mkdir -p "$WORK"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI on a small container: no fork warnings, shared memory only.
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
MPIRUN=(mpirun --oversubscribe)
# The script tests test the farm's machinery: on them the simulated device compiles nothing
# (TUNEFARM_SIM_COMPILE=0), which keeps CI's time. A test of the simulated device's NVRTC
# compile unsets it; TUNEFARM_SIM_COMPILE= (empty) from outside makes every test compile.
export TUNEFARM_SIM_COMPILE="${TUNEFARM_SIM_COMPILE-0}"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_exit CODE CMD...: run CMD, check its exit status, keep its stderr in $WORK/last.err
expect_exit() {
  local want="$1"
  shift
  local got=0
  "$@" >"$WORK/last.out" 2>"$WORK/last.err" || got=$?
  [ "$got" -eq "$want" ] || {
    cat "$WORK/last.err" >&2
    fail "exit $got, wanted $want: $*"
  }
}

# Generation numbers of a ledger, in file order.
generations() {
  grep '"type":"generation"' "$1" | sed -E 's/.*"generation":([0-9]+).*/\1/'
}

# Every ledger's generations run 1..N with no gap and no repeat.
check_consecutive() {
  local l n
  for l in "$@"; do
    n=0
    for g in $(generations "$l"); do
      n=$((n + 1))
      [ "$g" -eq "$n" ] || fail "$l: generation $g where $n was due"
    done
    [ "$n" -gt 0 ] || fail "$l: no generations"
  done
}
