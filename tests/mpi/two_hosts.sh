#!/usr/bin/env bash
# A campaign on two hosts, simulated with Linux namespaces, on the simulated device:
#  - hosts h1 and h2 are network namespaces with addresses of their own on one bridge, and a
#    hostname of their own (a UTS namespace made when a process enters them); mpirun runs in a
#    third namespace, the launcher, which is not in the hostfile, so every rank is remote;
#  - Open MPI starts its daemons through an rsh agent of this test (agent.sh HOST COMMAND...)
#    that enters HOST's namespaces instead of ssh, and talks TCP over the bridge only;
#  - the hostfile gives h1 two slots (rank 0, the coordinator, and one worker) and h2 two
#    (two workers): the coordinator takes no GPU, so h1's worker binds gpu0 and h2's workers
#    gpu0 and gpu1, three devices and three ledgers <host>-gpu<N>-<uuid8>.jsonl, none pooled
#    (the simulated device's UUID comes from its host and ordinal);
#  - every process of h2 (daemon, workers, measure children) is killed with SIGKILL mid-run, as
#    when a node dies; the same command then resumes all three ledgers, with no generation lost
#    or measured twice, and every decision recomputes.
# Needs root, iproute2 and util-linux's unshare; skips (77) where namespaces cannot be made.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"

# The cluster recipe's batch script must at least parse; a stub srun checks what it launches.
bash -n "$SRC/scripts/slurm.sbatch" || fail "scripts/slurm.sbatch does not parse"
mkdir -p stub
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/srun.args"\n' "$WORK" >stub/srun
chmod +x stub/srun
PATH="$WORK/stub:$PATH" SLURM_JOB_NUM_NODES_HET_GROUP_1=2 TUNEFARM="$TF" GPUS_PER_NODE=4 \
  bash "$SRC/scripts/slurm.sbatch" campaigns/x.json >sbatch.out 2>&1 ||
  { cat sbatch.out; fail "scripts/slurm.sbatch failed with a stub srun"; }
tr '\n' ' ' <srun.args >srun.line
grep -q -- "--het-group=0 --ntasks=1 .* : --het-group=1 --ntasks=8 .*--gpus-per-task=1 " srun.line ||
  fail "scripts/slurm.sbatch: srun should start 1 coordinator and 2 x 4 workers: $(cat srun.line)"

skip() {
  echo "SKIP: $* (this test makes network and UTS namespaces: root, iproute2, util-linux)"
  exit 77
}
[ "$(id -u)" -eq 0 ] || skip "not root"
command -v ip >/dev/null || skip "no 'ip' command"
command -v unshare >/dev/null || skip "no 'unshare' command"

# Names unique to this run, so two runs of the suite on one machine do not meet.
P="tf$$"
L="$P-l"
NETS=("$L" "$P-h1" "$P-h2")
SUBNET=10.250.77
killns() { # killns NS: SIGKILL every process in network namespace NS until none is left
  local pids
  for _ in $(seq 1 50); do
    pids=$(ip netns pids "$1" 2>/dev/null || true)
    [ -z "$pids" ] && return 0
    kill -9 $pids 2>/dev/null || true
    sleep 0.1
  done
  return 1
}
cleanup() {
  set +e # every step, even after one fails
  [ -n "${mpipid:-}" ] && kill -9 "$mpipid" 2>/dev/null
  for ns in "${NETS[@]}"; do
    killns "$ns" || true
    ip netns del "$ns" 2>/dev/null || true
  done
}
trap cleanup EXIT

setup_ns() {
  ip netns add "$L" || return 1
  ip -n "$L" link set lo up &&
    ip -n "$L" link add br0 type bridge &&
    ip -n "$L" addr add "$SUBNET.1/24" dev br0 &&
    ip -n "$L" link set br0 up || return 1
  local i=2 h
  for h in h1 h2; do
    ip netns add "$P-$h" &&
      ip -n "$P-$h" link set lo up &&
      ip -n "$L" link add "v$h" type veth peer name eth0 netns "$P-$h" &&
      ip -n "$L" link set "v$h" master br0 up &&
      ip -n "$P-$h" addr add "$SUBNET.$i/24" dev eth0 &&
      ip -n "$P-$h" link set eth0 up || return 1
    i=$((i + 1))
  done
}
setup_ns 2>ns.err || skip "could not make the namespaces: $(tail -1 ns.err)"
ip netns exec "$P-h1" unshare --uts -- sh -c 'hostname h1 && [ "$(hostname)" = h1 ]' 2>ns.err ||
  skip "could not give a namespace its own hostname: $(tail -1 ns.err)"

# Open MPI calls `agent.sh HOST orted ARGS...`; ARGS carry shell quoting, hence the eval.
cat >agent.sh <<EOF
#!/bin/sh
# Open MPI's rsh agent for the simulated hosts: run the command in HOST's network namespace
# under a UTS namespace whose hostname is HOST.
host=\$1
shift
exec ip netns exec "$P-\$host" unshare --uts -- sh -c 'hostname "\$0" && eval "\$*"' "\$host" "\$@"
EOF
chmod +x agent.sh
printf 'h1 slots=2\nh2 slots=2\n' >hostfile

mkdir -p campaigns
sed -E 's/"budget": [0-9]+/"budget": 30/' "$SRC/campaigns/layernorm-4096x768.json" \
  >campaigns/hosts.json
export TUNEFARM_ROOT="$SRC"
# mpirun in the launcher namespace, with a hostname of its own that is not in the hostfile.
cmd=(ip netns exec "$L" unshare --uts -- sh -c 'hostname launcher && exec "$@"' sh
     timeout 120 mpirun --hostfile "$WORK/hostfile" -np 4 --map-by slot
     --mca plm_rsh_agent "$WORK/agent.sh" --mca plm_rsh_no_tree_spawn 1
     --mca oob_tcp_if_include "$SUBNET.0/24"
     --mca btl tcp,vader,self --mca btl_tcp_if_include "$SUBNET.0/24"
     "$TF" run --backend sim --ledgers "$WORK/ledgers" campaigns/hosts.json)
dir="$WORK/ledgers/hosts"
gens() { cat "$@" 2>/dev/null | grep -c '"type":"generation"' || true; }

# First run, slowed down so that the kill lands mid-campaign (a generation takes 0.1 to 0.3 s,
# h1's worker faster than h2's two, which share the cores): killed when every ledger has 3.
TUNEFARM_SIM_SLEEP=20 "${cmd[@]}" >first.out 2>&1 &
mpipid=$!
ok=0
for _ in $(seq 1 300); do
  if [ "$(ls "$dir"/*.jsonl 2>/dev/null | wc -l)" -eq 3 ] &&
     [ "$(gens "$dir"/h1-gpu0-*.jsonl)" -ge 3 ] && [ "$(gens "$dir"/h2-gpu0-*.jsonl)" -ge 3 ] &&
     [ "$(gens "$dir"/h2-gpu1-*.jsonl)" -ge 3 ]; then
    ok=1
    break
  fi
  kill -0 "$mpipid" 2>/dev/null || break
  sleep 0.1
done
[ "$ok" -eq 1 ] || {
  tail -20 first.out
  fail "the first run did not reach 3 generations on each of h1-gpu0, h2-gpu0 and h2-gpu1" \
    "(the coordinator takes no GPU; ledgers: $(cd "$dir" 2>/dev/null && echo *.jsonl))"
}
h2procs=$(ip netns pids "$P-h2" | wc -l)
killns "$P-h2" || fail "h2's processes survive SIGKILL"
t0=$(date +%s)
wait "$mpipid" && fail "mpirun ended well after h2 was killed"
mpipid=
echo "h2 killed ($h2procs processes); mpirun ended after $(($(date +%s) - t0)) s"
for _ in $(seq 1 100); do [ -z "$(ip netns pids "$P-h1")" ] && break; sleep 0.1; done
[ -z "$(ip netns pids "$P-h1")" ] || fail "h1's processes outlive the run: $(ip netns pids "$P-h1")"
grep -q '"type":"end"' "$dir"/*.jsonl && fail "killed too late: a search had ended"
before=$(gens "$dir"/*.jsonl)

# The same command again resumes every ledger where it stopped.
"${cmd[@]}" >second.out 2>&1 || { cat second.out; fail "the resumed run failed"; }
[ "$(grep -c 'resuming ' second.out)" -eq 3 ] || { cat second.out; fail "not all three ledgers resumed"; }

mapfile -t ledgers < <(cd "$dir" && ls)
[ "${#ledgers[@]}" -eq 3 ] || fail "expected 3 ledgers, got: ${ledgers[*]}"
printf '%s\n' "${ledgers[@]}" | sed -E 's/-[0-9a-f]{8}\.jsonl$//' | tr '\n' ' ' >names
[ "$(cat names)" = "h1-gpu0 h2-gpu0 h2-gpu1 " ] ||
  fail "ledgers should be h1-gpu0, h2-gpu0, h2-gpu1 (the coordinator takes no GPU): ${ledgers[*]}"
field() { head -1 "$2" | sed -E "s/.*\"$1\":\"?([^\",}]*).*/\\1/"; }
uuids=()
for f in "${ledgers[@]}"; do
  l="$dir/$f"
  [ "$(grep -c '"type":"device"' "$l")" -eq 1 ] || fail "$f: not exactly one device record"
  host=${f%%-gpu*}
  [ "$(field host "$l")" = "$host" ] || fail "$f: device record's host is '$(field host "$l")'"
  n=${f#*-gpu}
  [ "$(field ordinal "$l")" = "${n%%-*}" ] || fail "$f: device record's ordinal is '$(field ordinal "$l")'"
  u=$(field uuid "$l")
  u8=${u#*-}
  [ "${f%.jsonl}" = "$host-gpu${n%%-*}-${u8:0:8}" ] || fail "$f: not named by its UUID $u"
  # Nothing pooled: every generation of this ledger was measured on its own device.
  other=$(grep '"type":"generation"' "$l" | grep -v -c "\"device\":\"$u\"" || true)
  [ "$other" -eq 0 ] || fail "$f: $other generations measured on another device"
  grep -q '"type":"end"' "$l" || fail "$f: the search did not finish"
  uuids+=("$u")
done
[ "$(printf '%s\n' "${uuids[@]}" | sort -u | wc -l)" -eq 3 ] || fail "devices share a UUID: ${uuids[*]}"
check_consecutive "$dir"/*.jsonl
after=$(gens "$dir"/*.jsonl)
[ "$after" -gt "$before" ] || fail "the resumed run added nothing ($before -> $after)"
"$TF" verify "$dir"/*.jsonl >verify.out || { cat verify.out; fail "decisions do not recompute"; }
grep -q ' 0 differ' verify.out || { cat verify.out; fail "decisions do not recompute"; }
"$TF" report "$dir" >report.md || fail "report failed"
for d in "h1 gpu0" "h2 gpu0" "h2 gpu1"; do
  grep -q "^## $d " report.md || fail "the report has no section for $d"
done
echo "ok: ${ledgers[*]}; $before generations before h2 was killed, $after after resuming"
