#!/usr/bin/env bash
# A user's project outside the repository (templates/, kernels/ and campaigns/ of its own):
# scripts/run.sh run from the project's folder tunes its campaign (a path relative to the
# caller's folder), and the ledgers, the page and the export land there; `tunefarm export
# LEDGER` from another folder finds the campaign, and `tunefarm report` the template (for the
# throughput), through the project root the ledger records.
# The repository is a copy whose setup.sh is a stand-in (as in run_script.sh).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
unset TUNEFARM_ROOT
mkdir -p repo/scripts repo/build proj/templates proj/kernels proj/campaigns elsewhere
cp "$SRC/scripts/run.sh" repo/scripts/
printf '#!/usr/bin/env bash\necho "setup: nothing to do"\n' >repo/scripts/setup.sh
ln -s "$TF" repo/build/tunefarm
cp "$SRC"/templates/{layernorm.json,layernorm.cu,ref_layernorm.cu} proj/templates/
cp "$SRC"/kernels/layernorm_twowarp.{json,cu} proj/kernels/
python3 - "$SRC/campaigns/layernorm-4096x768.json" proj/campaigns/mine.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["search"].update(budget=2, max_stale=50, restarts=0)
json.dump(c, open(sys.argv[2], "w"))
PY
(cd proj && bash ../repo/scripts/run.sh campaigns/mine.json --backend sim) >run.out 2>run.err ||
  { cat run.err; fail "run.sh from the project's folder failed"; }
l=$(ls "$WORK"/proj/ledgers/mine/*.jsonl | head -1)
[ -s "$l" ] || fail "no ledger under the project's folder"
[ -s proj/ledgers/mine.html ] || fail "no page under the project's folder"
ls proj/ledgers/mine-export/*.cu >/dev/null 2>&1 || fail "nothing exported under the project's folder"
grep -q "^# tunefarm report" run.out || fail "no report on stdout"
grep -qF "\"root\":\"$(cd proj && pwd -P)\"" "$l" || fail "the ledger does not record the project root"
# From another folder, with nothing but the ledger's path.
(cd elsewhere && "$TF" export -o out --name tf_mine "$l") >export.out 2>export.err ||
  { cat export.err; fail "export from another folder does not find the campaign"; }
[ -s elsewhere/out/tf_mine.cu ] && [ -s elsewhere/out/tf_mine.h ] || fail "no export in elsewhere/out"
(cd elsewhere && "$TF" report "$l") >report.out 2>report.err || { cat report.err; fail "report from another folder failed"; }
grep -q "throughput of one launch: the flops and bytes of templates/layernorm.json" report.out ||
  { grep throughput report.out; fail "report from another folder does not find the template"; }
echo "ok: run.sh from a project folder, export and report of its ledger from elsewhere"
