#!/usr/bin/env bash
# scripts/run.sh (the Quick start) says what it is doing while it builds and while
# the farm enumerates, and ends with the report and the page. Run in a copy of the tree whose
# setup.sh is a stand-in (the real one builds build/ in the source tree, which the other
# tests are using), with this build's binary as build/tunefarm.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p tree/scripts tree/build tree/campaigns
cp "$SRC/scripts/run.sh" tree/scripts/
printf '#!/usr/bin/env bash\necho "setup: nothing to do"\n' >tree/scripts/setup.sh
ln -s "$TF" tree/build/tunefarm
ln -s "$SRC/templates" tree/templates
ln -s "$SRC/kernels" tree/kernels
python3 - "$SRC/campaigns/layernorm-4096x768.json" tree/campaigns/ln.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=6, max_stale=50, restarts=0)
json.dump(c, open(sys.argv[2], "w"))
PY
unset TUNEFARM_ROOT
# From the tree's root, as the Quick start runs it: the ledgers land under the caller's folder.
(cd tree && bash scripts/run.sh campaigns/ln.json --backend sim) >run.out 2>run.err ||
  { cat run.err; fail "run.sh failed"; }
for want in "run.sh: installing what is missing, configuring and building build/" \
  "run.sh: built build/tunefarm" "tunefarm: enumerating its space: 19440 configurations" \
  "tunefarm: measuring, 6 generations per device" \
  "run.sh: the report as a page: ledgers/ln.html (open it in a browser)"; do
  grep -qF -- "$want" run.err || { cat run.err; fail "run.sh did not say '$want'"; }
done
grep -Eq "run.sh: (no GPU here: the farm runs on the simulated device|[0-9]+ GPU)" run.err || fail "no word on the GPUs"
grep -q "^# tunefarm report" run.out || fail "no report on stdout"
[ -s tree/ledgers/ln.html ] || fail "no page"
grep -q "setup: nothing to do" run.err run.out && fail "setup's output was not kept aside"
echo "ok: run.sh says what it does and ends with the report and tree/ledgers/ln.html"

# The ledgers folder given as --ledgers=DIR (as getopt_long reads it) is where the report and
# the export come from, not the default folder of the run above.
(cd tree && bash scripts/run.sh campaigns/ln.json --backend sim --ledgers=other) >run2.out 2>run2.err ||
  { cat run2.err; fail "run.sh --ledgers=other failed"; }
grep -qF "run.sh: the report as a page: other/ln.html" run2.err || { cat run2.err; fail "run.sh did not report other/"; }
[ -s tree/other/ln.html ] || fail "no page in other/"
ls tree/other/ln-export/*.cu >/dev/null 2>&1 || fail "nothing exported to other/ln-export/"
echo "ok: run.sh --ledgers=other reports and exports tree/other/"
