#!/usr/bin/env bash
# `tunefarm bench` on the simulated device: the ledger of a short run, then one table row per
# arm (the farm best, the start, the committed kernels of the template's interface, cuBLAS skipped), the
# farm best's configuration is the ledger's final best, a wrong arm is not timed, and bad
# input ends with one message naming the file or the key and exit status 2.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC"
mkdir -p campaigns
sed -E 's/"budget": [0-9]+/"budget": 6/' "$SRC/campaigns/matmul-1024.json" >campaigns/matmul-1024.json
"${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" campaigns/matmul-1024.json \
  2>run.err || { cat run.err; fail "run failed"; }
ledger=$(ls "$WORK"/ledgers/matmul-1024/*.jsonl)

# {"BM":64,"BN":64,...} -> "BM=64 BN=64 ..."
config_text() { sed -E 's/^[^{]*\{//; s/\}.*$//; s/[" ]//g; s/:/=/g; s/,/ /g'; }
# The ledger's final best, read here without tunefarm: the last generation record's "new"
# when it was kept, else its "best".
last=$(grep '"type":"generation"' "$ledger" | tail -1)
key=best
echo "$last" | grep -q '"decision":"keep"' && key=new
want=$(echo "$last" | grep -o "\"$key\":{[^}]*}" | config_text)
start=$(grep -o '"start": {[^}]*}' campaigns/matmul-1024.json | config_text)
uuid8=$(head -1 "$ledger" | sed -E 's/.*"uuid":"SIM-([0-9a-f]{8}).*/\1/')
[ -n "$want" ] && [ -n "$start" ] || fail "cannot read the ledger's best or the campaign's start"

"$TF" bench --backend sim --ledger "$ledger" --rounds 3 --samples 5 campaigns/matmul-1024.json \
  >bench.md 2>bench.err || { cat bench.err; fail "bench failed"; }
cat bench.md
# measured FILE ARM WHAT: a row with a median and a spread
measured() {
  grep -qE "^\| $2 \| $3 \| [0-9]+\.[0-9]+ \| [0-9.]+–[0-9.]+ \|" "$1" || fail "$1: no measured row '$2 | $3'"
}
measured bench.md "farm best \(SIM-$uuid8\)" "$want"
measured bench.md start "$start"
measured bench.md "committed kernel" matmul_pipelined
measured bench.md "committed kernel" matmul_regtile
grep -qF '| cuBLAS | cublasSgemm_v2, CUBLAS_DEFAULT_MATH (FP32, no TF32) | skipped: needs the cuda backend |' \
  bench.md || fail "cuBLAS is not listed as skipped"
[ "$(grep -c '^| ' bench.md)" -eq 6 ] || fail "expected the header row and 5 arms"
tail -1 bench.md | grep -q '^| cuBLAS' || fail "the table is not the last thing printed"
grep -q '^- date: .* UTC$' bench.md || fail "no date"
grep -q 'R = 3 rounds x S = 5 launches' bench.md || fail "the protocol line does not say R x S"
grep -qF "| TFLOP/s |" bench.md || fail "matmul is not reported in TFLOP/s"
grep -q 'job 2 of 2' bench.err || fail "no progress lines on stderr"
# The simulated device runs no kernel: the header says its times are synthetic and that no arm
# was checked, and no row claims a relative error.
grep -q '^- device: .*backend sim (simulated device: its times are synthetic.*no output is checked)' \
  bench.md || fail "the header does not say the times are synthetic and unchecked"
grep -q "checked against the template's reference" bench.md && fail "bench --backend sim claims a check"
grep -q '^- protocol: .*no arm checked' bench.md || fail "the protocol line does not say nothing was checked"
[ "$(grep -c '| not checked |' bench.md)" -eq 4 ] || fail "the measured rows do not say 'not checked'"

# Another shape, JSON lines, another template.
"$TF" bench --backend sim --dims M=1000,N=1000,K=1000 --rounds 2 --samples 3 \
  campaigns/matmul-1024.json >dims.md 2>/dev/null || fail "bench --dims failed"
grep -q '^## .*M=1000 N=1000 K=1000' dims.md || fail "--dims is not in the header"
measured dims.md start "$start" # the start's constraints accept 1000

# --config: the start with some knobs set, one row labelled config, before the start's.
"$TF" bench --backend sim --config BN=128,TM=8,VEC=4,BK=32 --rounds 2 --samples 3 --no-cublas \
  campaigns/matmul-1024.json >config.md 2>/dev/null || fail "bench --config failed"
cfg=$(echo "$start" | sed -E 's/BN=[0-9]+/BN=128/; s/BK=[0-9]+/BK=32/; s/TM=[0-9]+/TM=8/; s/VEC=[0-9]+/VEC=4/')
measured config.md config "$cfg"
[ "$(grep -n '^| config ' config.md | cut -d: -f1)" -lt "$(grep -n '^| start ' config.md | cut -d: -f1)" ] ||
  fail "the config row does not come before the start's"
"$TF" bench --backend sim --json --rounds 2 --samples 3 --no-cublas "$SRC/campaigns/layernorm-4096x768.json" \
  >ln.jsonl 2>/dev/null || fail "bench --json failed"
[ "$(grep -c '"type":"bench_arm"' ln.jsonl)" -eq 3 ] || fail "expected 3 JSON arms (start, 2 kernels)"
grep -q '"what":"layernorm_twowarp","status":"measured"' ln.jsonl || fail "layernorm_twowarp not measured"
grep -q '"gbps":[0-9]' ln.jsonl || fail "layernorm is not reported in GB/s"
grep -q '"rel_err":0' ln.jsonl && fail "a simulated arm claims a relative error"
grep -q '"rel_err":null' ln.jsonl || fail "a simulated arm's rel_err is not null (not measured)"

# A wrong arm is reported, not timed, and the exit status says so.
sed -E 's/"decide"/"inject": [{"when": {"BK": 64}, "fault": "wrong"}], "decide"/' \
  campaigns/matmul-1024.json >campaigns/wrong.json
# The arms sharing its job (a correct configuration, a committed kernel) are still measured: the
# job runs again with the wrong arm's place filled by one of them.
expect_exit 1 "$TF" bench --backend sim --rounds 2 --samples 3 --config BK=16 campaigns/wrong.json
grep -qE "^\| start \| $start \| WRONG \(not timed\) \| — \|" last.out || fail "the wrong start is not WRONG"
grep -qE "^\| config \| [^|]*BK=16[^|]* \| [0-9]+\.[0-9]+ \|" last.out ||
  fail "the correct configuration beside the wrong arm was not measured"
grep -qE "^\| committed kernel \| matmul_pipelined \| [0-9]+\.[0-9]+ \|" last.out ||
  fail "the committed kernel beside the wrong arm was not measured"

# Bad input: exit 2, one message naming the file or the key, nothing on stdout.
n=0
case_() {
  local name="$1" want="$2"
  shift 2
  expect_exit 2 timeout 20 "$TF" bench --backend sim "$@"
  grep -qF -- "$want" last.err || { cat last.err; fail "$name: message lacks '$want'"; }
  [ "$(grep -vc 'note:' last.err)" -le 1 ] || { cat last.err; fail "$name: more than one message"; }
  [ -s last.out ] && fail "$name: printed a partial result"
  n=$((n + 1))
  echo "ok $name: $(head -1 last.err)"
}
c=campaigns/matmul-1024.json
case_ missing-campaign "nope.json" nope.json
case_ missing-ledger "ledger 'nope.jsonl'" --ledger nope.jsonl "$c"
case_ not-a-ledger "not a ledger" --ledger "$c" "$c"
head -1 "$ledger" >header-only.jsonl
case_ no-generation "ledger 'header-only.jsonl': no generation" --ledger header-only.jsonl "$c"
{ head -2 "$ledger"; echo 'garbage'; tail -n +3 "$ledger"; } >corrupt.jsonl
case_ corrupt-line "ledger 'corrupt.jsonl': line 3" --ledger corrupt.jsonl "$c"
case_ other-campaign "key 'campaign' is 'matmul-1024'" --ledger "$ledger" "$SRC/campaigns/layernorm-4096x768.json"
grep -v '"type":"end"' "$ledger" | sed -E '$ s/"(best|new)":\{"BM":[0-9]+/"\1":{"BM":7/g' >badbest.jsonl
case_ bad-best ".BM': 7 is not in the knob's domain" --ledger badbest.jsonl "$c"
case_ dims-key "key 'Q' is not a dimension" --dims Q=3 "$c"
case_ dims-range "key 'M': 0 is outside" --dims M=0 "$c"
case_ dims-value "key 'K': 'x' is not an integer" --dims K=x "$c"
case_ config-key "key 'XX' is not a knob of template 'matmul'" --config XX=1 "$c"
case_ config-value "key 'BM': '65' is not one of its values" --config BM=65 "$c"
case_ config-form "'BM' is not KNOB=VALUE" --config BM "$c"
case_ unknown-option "'--bogus'" --bogus "$c"
case_ rounds "option '--rounds'" --rounds 0 "$c"
case_ no-campaign "give exactly one campaign file"
expect_exit 2 "$TF" bench --backend gpu "$c"
grep -qF "option '--backend'" last.err || fail "--backend gpu: no clear message"
# cuBLAS is opened at run time: the binary starts where there is no libcublas or driver.
! ldd "$TF" | grep -Eq 'libcublas|libcuda\.so' || fail "the binary links libcublas or libcuda"
# A project without kernels/ (committed kernels are optional): its start alone is an arm.
cp -r "$SRC/examples/transpose" tp
TUNEFARM_ROOT= "$TF" bench --backend sim --rounds 2 --samples 3 tp/campaigns/transpose-4096x3000.json \
  >tp.md 2>tp.err || { cat tp.err; fail "bench of a project without kernels/ failed"; }
grep -q '^| start | TILE=16 ROWS=1 PAD=0 VEC=1 |' tp.md || { cat tp.md; fail "no start row without kernels/"; }
echo "ok: the table, --dims, --json, a wrong arm, a project without kernels/ and $n bad-input cases"
