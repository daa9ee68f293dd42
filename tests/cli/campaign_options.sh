#!/usr/bin/env bash
# Campaigns that fit their user. `knobs` narrows a template's domains (and is held
# to them), a campaign outside the repository finds its template or names the fix, and a
# template nothing checks (no reference, or a "family") is refused at `check` and by a
# simulated run, naming the file and the key.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
unset TUNEFARM_ROOT
good="$SRC/campaigns/matmul-1024.json"

# refused WANT CMD...: exit 2, one line holding WANT, nothing on stdout
refused() {
  local want="$1"
  shift
  expect_exit 2 "$@"
  grep -qF -- "$want" last.err || { cat last.err; fail "message lacks '$want'"; }
  [ "$(wc -l <last.err)" -eq 1 ] || { cat last.err; fail "more than one line"; }
  [ -s last.out ] && fail "printed a partial result"
  echo "ok: $(cut -c1-220 last.err)"
}

# --- knobs: the space shrinks to the narrowed values; values outside the template's refused
mkdir -p root/campaigns
ln -s "$SRC/templates" root/templates
ln -s "$SRC/kernels" root/kernels
sed 's/"problem":/"knobs": {"BK": [32, 64]}, "problem":/' "$good" >root/campaigns/narrow.json
expect_exit 0 "$TF" check root/campaigns/narrow.json
grep -q "space: *442368 configurations" last.out || { cat last.out; fail "BK [32, 64] did not narrow the space to 2/5"; }
echo "ok: knobs narrows the space to $(grep -o 'space: *[0-9]*' last.out)"
sed 's/"problem":/"knobs": {"BK": [32, 48]}, "problem":/' "$good" >root/campaigns/outside.json
refused "campaign 'root/campaigns/outside.json': key 'knobs.BK': 48 is not in the template's domain {8, 16, 32, 64, 128}" \
  "$TF" check root/campaigns/outside.json
sed 's/"problem":/"knobs": {"BK": [128]}, "problem":/' "$good" >root/campaigns/nostart.json
refused "key 'start.BK': 64 is not in the knob's domain {128}" "$TF" check root/campaigns/nostart.json

# --- a campaign outside the repository: the fix is named; TUNEFARM_ROOT is it
mkdir -p mine
cp "$good" mine/my.json
refused "campaign 'mine/my.json': key 'template': no templates/matmul.json in $WORK (the campaign folder's parent)" \
  "$TF" check mine/my.json
grep -qF "set TUNEFARM_ROOT to the folder that holds them" last.err || fail "the fix is not named"
TUNEFARM_ROOT="$SRC" expect_exit 0 "$TF" check mine/my.json
echo "ok: TUNEFARM_ROOT finds the template of a campaign outside the repository"

# --- the reference: a template without one, or with a "family" (a built-in reference of
# older templates), is refused where the template loads, on every backend
mkdir -p fam/campaigns fam/templates fam/kernels
cp "$SRC"/templates/faulty.* "$SRC"/templates/ref_scale2.cu fam/templates/
cp "$SRC/campaigns/faulty.json" fam/campaigns/
python3 - "$SRC/templates/faulty.json" fam/templates/faulty.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
del t["reference"]
json.dump(t, open(sys.argv[2], "w"), indent=1)
PY
refused "key 'reference': nothing checks the kernel's outputs" "$TF" check fam/campaigns/faulty.json
grep -qF "templates/faulty.json': key 'reference'" last.err || fail "the template's file is not named"
expect_exit 2 "${MPIRUN[@]}" -np 2 "$TF" run --backend sim --ledgers "$WORK/ledgers" fam/campaigns/faulty.json
grep -qF "key 'reference': nothing checks" last.err || { cat last.err; fail "the simulated run did not refuse it"; }
[ ! -e "$WORK/ledgers" ] || fail "the simulated run wrote a ledger for a template nothing checks"
echo "ok: the simulated run refuses it before any ledger"
sed 's/"kernel": "tf_faulty",/"kernel": "tf_faulty", "family": "scale2",/' "$SRC/templates/faulty.json" \
  >fam/templates/faulty.json
refused "templates/faulty.json': key 'family': tunefarm has no built-in references; name a reference kernel or library ('reference'" \
  "$TF" check fam/campaigns/faulty.json
