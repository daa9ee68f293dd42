#!/usr/bin/env bash
# Session 7, device call 7 (nvidia-h200-x2). Is session 6's 4096x768 result a property of the
# farm or of one seed? layernorm-4096x768 as committed but with measure.seed 7 (new inputs, new
# restart points, new tie-breaks) on both GPUs; the bests against the template's earlier best,
# session 6's winner and Triton on GPU 0, twice; then the GPU tests at this commit.
set -uo pipefail
source bench/gpu_env.sh
LATE_S=${LATE_S:-470}
gpu_session_start
export TUNEFARM_ROOT=$PWD  # the campaign copy lives outside campaigns/
mkdir -p seed7/campaigns
python3 -c '
import json; c = json.load(open("campaigns/layernorm-4096x768.json")); c["measure"]["seed"] = 7
json.dump(c, open("seed7/campaigns/layernorm-4096x768.json", "w"), indent=1)'
late "run seed 7" || {
  t0=$(date +%s)
  timeout 330 mpirun --oversubscribe --bind-to none -np 3 build/tunefarm run --backend cuda \
    --ledgers "$R/ledgers" seed7/campaigns/layernorm-4096x768.json >"$R/logs/run-layernorm-4096x768.log" 2>&1
  say "mpirun -np 3 build/tunefarm run --backend cuda (seed 7) layernorm-4096x768: rc=$? $(( $(date +%s) - t0 )) s"
  build/tunefarm report "$R/ledgers/layernorm-4096x768" >"$R/logs/report-layernorm-4096x768.md" 2>&1
  build/tunefarm verify "$R"/ledgers/layernorm-4096x768/*.jsonl | tail -1 | tee -a "$S"
  grep -E 'final best|^- (restarts|ended)' "$R/logs/report-layernorm-4096x768.md" | cut -c1-200 | tee -a "$S"
}
export CUDA_VISIBLE_DEVICES=0
for i in 1 2; do
  mapfile -t a < <(for l in "$R"/ledgers/layernorm-4096x768/*.jsonl; do printf -- '--ledger\n%s\n' "$l"; done
    configs FORM=0,BLOCK=64,VEC=4,CACHE=6,RSQRT=1,ROWS=2 FORM=0,BLOCK=128,VEC=2,CACHE=12,RSQRT=1,ROWS=2)
  bench_run "layernorm-4096x768-$i" 60 "${a[@]}" seed7/campaigns/layernorm-4096x768.json
  peers_run layernorm 60 "layernorm-$i"
done
unset TUNEFARM_ROOT
ctest_gpu 150
