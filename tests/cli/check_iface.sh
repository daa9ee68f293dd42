#!/usr/bin/env bash
# `check` and `audit` compare each kernel's interface, read from the name NVRTC lowers it to,
# with its spec: the committed templates, kernels and the softmax example pass; a spec whose
# arguments are swapped, missing, of a wrong type or a const pointer to an output, whose
# knobs are out of the template's order, or whose reference or control kernel does not take
# its arguments, is refused with exit 2, one line naming the file, the key and both sides.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_CACHE="${TUNEFARM_CACHE:-$WORK/cache}"

# the committed ones: every template, every committed kernel as a control, the example
mkdir -p root/campaigns root/templates root/kernels
cp "$SRC"/templates/* root/templates/
cp "$SRC"/kernels/*.json "$SRC"/kernels/*.cu root/kernels/
for c in layernorm-4096x768 matmul-1024 faulty gain-chain-short; do
  cp "$SRC/campaigns/$c.json" root/campaigns/
done
sed 's/"control": "matmul_regtile"/"control": "matmul_pipelined"/' "$SRC/campaigns/matmul-1024.json" >root/campaigns/pipe.json
sed 's/"control": "layernorm_twowarp"/"control": "layernorm_row"/' "$SRC/campaigns/layernorm-4096x768.json" >root/campaigns/row.json
grep -q matmul_pipelined root/campaigns/pipe.json && grep -q layernorm_row root/campaigns/row.json || fail "control not replaced"
cp -r "$SRC/examples/softmax" sm
for c in root/campaigns/*.json sm/campaigns/softmax-4096x1000.json; do
  expect_exit 0 "$TF" check "$c"
  [ ! -s last.err ] || { cat last.err; fail "check $c: a message"; }
done
echo "ok: the committed templates, kernels and the softmax example pass"

camp=sm/campaigns/softmax-4096x1000.json
tmpl=sm/templates/softmax.json
cp "$tmpl" softmax.orig
cp sm/templates/ref_softmax.cu ref.orig
R='{"name": "R", "type": "i32", "value": "R"}' D='{"name": "D", "type": "i32", "value": "D"}'

# edit FILE FROM TO: FROM (plain text, once) replaced by TO, or the test fails
edit() {
  local text
  text=$(cat "$1")
  [[ "$text" == *"$2"* ]] || fail "$1 lacks '$2'"
  printf '%s\n' "${text/"$2"/"$3"}" >"$1"
}
args="\"args\": [\"x\", \"y\", \"lse\", $R, $D]"

# refused CMD WANT...: CMD exits 2 with one line holding every WANT
refused() {
  local cmd="$1"
  shift
  expect_exit 2 "$TF" $cmd "$camp"
  [ "$(wc -l <last.err)" -eq 1 ] || { cat last.err; fail "not one line"; }
  for w in "$@"; do grep -qF -- "$w" last.err || { cat last.err; fail "no '$w'"; }; done
  echo "ok: $(cut -c1-240 last.err)"
  cp softmax.orig "$tmpl"
  cp ref.orig sm/templates/ref_softmax.cu
}

# swapped: a scalar where the kernel takes a pointer
edit "$tmpl" "$args" "\"args\": [\"x\", \"y\", $R, \"lse\", $D]"
refused check "/sm/templates/softmax.json': key 'args[2]': kernel 'tf_softmax<32, 1, 1, 0, 0>' takes 'float *', the spec passes scalar 'R' of type i32"
# swapped buffers: the output y where the kernel takes a const pointer
edit "$tmpl" "$args" "\"args\": [\"y\", \"x\", \"lse\", $R, $D]"
refused check "key 'args[0]'" "takes 'const float *', the spec passes buffer 'y' of type f32 (role output), which the kernel writes"
# missing: no lse
edit "$tmpl" "$args" "\"args\": [\"x\", \"y\", $R, $D]"
refused check "key 'args': kernel 'tf_softmax<32, 1, 1, 0, 0>' takes 5 parameters (const float *, float *, float *, int, int), the spec passes 4 arguments"
# a wrong type, in audit too
sed -i 's/{"name": "x", "count": "R\*D", "role": "input", "type": "f32"/{"name": "x", "count": "R*D", "role": "input", "type": "f16"/' "$tmpl"
grep -q '"type": "f16"' "$tmpl" || fail "x not made f16"
cp "$tmpl" f16.json
refused check "key 'args[0]'" "takes 'const float *', the spec passes buffer 'x' of type f16"
cp f16.json "$tmpl"
refused "audit --where BLOCK==32&&VEC==1&&ROWS==1&&HOLD==0" "tunefarm audit: spec '" "/sm/templates/softmax.json': key 'args[0]'"
# a typed scalar of the wrong type
sed -i 's/{"name": "D", "type": "i32"/{"name": "D", "type": "i64"/' "$tmpl"
refused check "key 'args[4]'" "takes 'int', the spec passes scalar 'D' of type i64"
# a const pointer to an output: x checked as inout
sed -i 's/"role": "input", "type": "f32", "init"/"role": "inout", "type": "f32", "check": {"rtol": 1e-5}, "init"/' "$tmpl"
grep -q '"inout"' "$tmpl" || fail "x not made inout"
refused check "key 'args[0]'" "takes 'const float *', the spec passes buffer 'x' of type f32 (role inout), which the kernel writes"
# knobs out of the template's order
vec=$(grep '"VEC": {' "$tmpl") rows=$(grep '"ROWS": {' "$tmpl")
edit "$tmpl" "$vec"$'\n'"$rows" "$rows"$'\n'"$vec"
refused check "key 'knobs': the kernel 'tf_softmax'" "declares the template parameters (BLOCK, VEC, ROWS, HOLD, LOAD), the spec's knobs are (BLOCK, ROWS, VEC, HOLD, LOAD)"
# the reference kernel takes a double where the spec passes a float buffer
sed -i 's/float \*lse, int R/double *lse, int R/' sm/templates/ref_softmax.cu
grep -q 'double \*lse' sm/templates/ref_softmax.cu || fail "ref not edited"
refused check "key 'args[2]': reference kernel 'ref_softmax' takes 'double *', the spec passes buffer 'lse' of type f32"

# a committed control kernel whose spec drops its last argument: it no longer takes the
# template's interface
camp=root/campaigns/layernorm-4096x768.json
cp root/kernels/layernorm_twowarp.json twowarp.orig
sed -i 's/, {"float": 1e-5}\]/]/' root/kernels/layernorm_twowarp.json
grep -q '"D"\]' root/kernels/layernorm_twowarp.json || fail "control args not edited"
refused check "key 'control': kernel 'layernorm_twowarp' takes other dimensions, buffers or arguments than the template 'layernorm'"
# a committed control kernel whose source takes a parameter its spec does not list
cp twowarp.orig root/kernels/layernorm_twowarp.json
sed -i '/tf_layernorm_twowarp(/,/float eps) {/ s/float eps) {/float eps, int extra) {/' root/kernels/layernorm_twowarp.cu
grep -q 'int extra' root/kernels/layernorm_twowarp.cu || fail "control source not edited"
refused check "/root/kernels/layernorm_twowarp.json': key 'args': kernel 'tf_layernorm_twowarp' takes 8 parameters"
