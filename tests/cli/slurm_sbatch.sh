#!/usr/bin/env bash
# scripts/slurm.sbatch in the environment sbatch gives a heterogeneous job, with stub srun,
# scancel and scontrol on PATH that record what they are asked: each component's srun gets its
# --cpus-per-task (srun does not inherit the batch job's) and --cpu-bind=cores, the coordinator
# component first (MPI rank 0); USR1 before the time limit becomes SIGTERM to every task
# (scancel --signal=TERM JOB), and once srun has ended the job is requeued; a requeued job runs
# the same command, which resumes; a farm that ends by itself is not requeued.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
script="$SRC/scripts/slurm.sbatch"
bash -n "$script" || fail "scripts/slurm.sbatch does not parse"
if command -v shellcheck >/dev/null; then
  shellcheck "$script" || fail "scripts/slurm.sbatch: shellcheck"
fi

mkdir -p stub
# srun: its arguments, one a line; with STUB_BLOCK it stands for the tasks until SIGTERM.
cat >stub/srun <<'STUB'
#!/bin/bash
printf '%s\n' "$@" >"$STUB_DIR/srun.args"
if [ -n "${STUB_BLOCK:-}" ]; then
  trap 'echo "task: SIGTERM" >>"$STUB_DIR/events"; exit 143' TERM
  echo $$ >"$STUB_DIR/srun.pid"
  while :; do sleep 0.05; done
fi
echo "srun: ended" >>"$STUB_DIR/events"
exit "${STUB_STATUS:-0}"
STUB
# scancel --signal=TERM JOB signals the job's tasks: here, the stub srun.
cat >stub/scancel <<'STUB'
#!/bin/bash
echo "scancel $*" >>"$STUB_DIR/events"
[ "$1" = --signal=TERM ] && kill -TERM "$(cat "$STUB_DIR/srun.pid")"
exit 0
STUB
cat >stub/scontrol <<'STUB'
#!/bin/bash
echo "scontrol $*" >>"$STUB_DIR/events"
STUB
chmod +x stub/*
export PATH="$WORK/stub:$PATH" STUB_DIR="$WORK" TUNEFARM="$TF" GPUS_PER_NODE=4
# As sbatch sets them for this script's job: 1 coordinator task of 2 cores, 2 nodes x 4 tasks
# of 8 cores and one GPU each.
export SLURM_JOB_ID=4242 SLURM_JOB_NUM_NODES=3 SLURM_NTASKS=1 SLURM_CPUS_PER_TASK=2 \
  SLURM_CPUS_PER_TASK_HET_GROUP_0=2 SLURM_CPUS_PER_TASK_HET_GROUP_1=8 \
  SLURM_JOB_NUM_NODES_HET_GROUP_0=1 SLURM_JOB_NUM_NODES_HET_GROUP_1=2 \
  SLURM_NTASKS_HET_GROUP_1=8 SLURM_GPUS_ON_NODE=4 SLURM_HET_SIZE=2

# The launch line.
bash "$script" campaigns/x.json /shared/ledgers >plain.out 2>&1 || { cat plain.out; fail "the script failed"; }
tr '\n' ' ' <srun.args >srun.line
c0="--het-group=0 --ntasks=1 --cpus-per-task=2 --cpu-bind=cores $TF run "
c1=": --het-group=1 --ntasks=8 --ntasks-per-node=4 --cpus-per-task=8 --cpu-bind=cores --gpus-per-task=1 $TF run "
grep -qF -- "$c0" srun.line || fail "component 0 (the coordinator): wanted '$c0' in: $(cat srun.line)"
grep -qF -- "$c1" srun.line || fail "component 1 (the workers): wanted '$c1' in: $(cat srun.line)"
[ "$(grep -c -- '--het-group' srun.args)" -eq 2 ] || fail "not two components: $(cat srun.line)"
[ "$(sed -n 2p srun.args)" = --het-group=0 ] || fail "the coordinator's component is not first: $(cat srun.line)"
grep -q -- --fresh srun.args && fail "the launch has --fresh: a requeued job would not resume"
grep -q scontrol events && fail "a farm that ended by itself was requeued"
cp srun.line first.line

# A failing farm: its status, no requeue.
rm -f events
STUB_STATUS=3 bash "$script" campaigns/x.json /shared/ledgers >fail.out 2>&1 && fail "srun's failure was hidden"
grep -q scontrol events && fail "a farm that failed was requeued"

# The time limit: USR1 to the batch shell (--signal=B:USR1@120).
rm -f events srun.pid
STUB_BLOCK=1 bash "$script" campaigns/x.json /shared/ledgers >signal.out 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s srun.pid ] && break; sleep 0.05; done
[ -s srun.pid ] || { kill "$pid"; fail "the stub srun never started"; }
kill -USR1 "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 0 ] || { cat signal.out; fail "a stop before the time limit should end the script with 0, not $status"; }
want=$'scancel --signal=TERM 4242\ntask: SIGTERM\nscontrol requeue 4242'
[ "$(cat events)" = "$want" ] ||
  fail "USR1 should send SIGTERM to every task, wait for them, then requeue; events: $(cat events)"
grep -q "near its time limit" signal.out || fail "the stop is not said in the job's output"

# TUNEFARM_REQUEUE=0: the same stop, no requeue.
rm -f events srun.pid
TUNEFARM_REQUEUE=0 STUB_BLOCK=1 bash "$script" campaigns/x.json /shared/ledgers >noreq.out 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s srun.pid ] && break; sleep 0.05; done
kill -USR1 "$pid"
wait "$pid" || fail "the stop without requeue failed"
grep -q "task: SIGTERM" events || fail "TUNEFARM_REQUEUE=0: the tasks were not stopped"
grep -q scontrol events && fail "TUNEFARM_REQUEUE=0 requeued"

# The requeued job (Slurm counts restarts) runs the same command: it resumes the ledgers.
SLURM_RESTART_COUNT=1 bash "$script" campaigns/x.json /shared/ledgers >again.out 2>&1 || fail "the requeued job failed"
tr '\n' ' ' <srun.args >again.line
cmp -s first.line again.line || fail "a requeued job launches otherwise: $(cat again.line)"
grep -q "restart 1" again.out || fail "the requeued job does not say it is a restart"
echo "ok: -c and --cpu-bind per component, USR1 stops the tasks and requeues, the same command again"
