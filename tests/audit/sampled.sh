#!/usr/bin/env bash
# CI's audit: a sample of every template's reachable space, rendered and compiled with NVRTC
# (sm_90) on two ranks, chosen so that every template path is still compiled.
#
# matmul is sampled from two spaces, 1024^3 (5502 configurations: K slices and split-K, and
# a superset of 4096^3's) and 4095x4097x1023 (1365: only scalar copies are legal there, so
# the 4-byte paths are reached); layernorm from 4096x768 and 16384x4096. cover.awk picks from
# each pair a set in which every pair of knob values that occurs together in either space
# occurs together (about 30 configurations). The test lists what its --where expressions
# select, checks that with covered.awk and compiles it; a second audit of it must come from
# the cubin cache. Beside that, a fixed one-in-53 sample of each campaign's space, and the
# faulty and chain templates whole.
#
# Every reachable configuration: tests/audit/full.sh (label audit-full, run on request).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib.bash"
cd "$WORK"

# sample_template TEMPLATE CAMPAIGN 'DIMS OF THE SECOND SPACE'
sample_template() {
  local fam=$1 names tag e check n=0
  reshaped "$fam-other" "$2" "$3"
  local -A file=([main]="$SRC/campaigns/$2.json" [other]="$WORK/$fam-other.json")
  names=$(knob_names "${file[main]}")
  { listed main "${file[main]}"; listed other "${file[other]}"; } >"$fam.all"
  awk -f "$AUDIT_DIR/cover.awk" "$fam.all" >"$fam.cover"
  : >"$fam.selected"
  for tag in main other; do
    { grep "^$tag " "$fam.cover" || true; } | where_of "$names" >"$fam.$tag.where"
    while read -r e; do listed "$tag" "${file[$tag]}" "$e"; done <"$fam.$tag.where" >>"$fam.selected"
  done
  cmp -s <(sort "$fam.cover") <(sort "$fam.selected") ||
    fail "$fam: the --where expressions select other configurations than cover.awk chose"
  check=$(awk -f "$AUDIT_DIR/covered.awk" "$fam.selected" "$fam.all") ||
    { echo "$check"; fail "$fam: the sample misses knob values or pairs"; }
  echo "$fam ($names): $check"
  for tag in main other; do
    while read -r e; do
      audit_where "$fam-$tag-$((n += 1))" "${file[$tag]}" 2 "$e" "$(grep -o '(' <<<"$e" | wc -l)"
    done <"$fam.$tag.where"
  done
  # The same configurations again, on one rank: every program must come from the cache.
  e=$(head -1 "$fam.main.where")
  "$TF" audit --where "$e" "${file[main]}" >"$fam.cached" 2>&1 || { cat "$fam.cached"; fail "$fam: cached audit failed"; }
  grep -qE 'failed 0; ([0-9]+) NVRTC programs \(\1 from the cache\)' "$fam.cached" ||
    { tail -1 "$fam.cached"; fail "$fam: the second audit compiled again"; }
  echo "$fam cached: $(tail -1 "$fam.cached" | sed 's/^audit: //')"
  audit_where "$fam-sample" "${file[main]}" 2 "$(sampled_where "$names" 53)"
}

sample_template matmul matmul-1024 '"M": 4095, "N": 4097, "K": 1023'
sample_template layernorm layernorm-4096x768 '"R": 16384, "D": 4096'
audit_where faulty "$SRC/campaigns/faulty.json" 2
audit_where chain "$SRC/campaigns/decide-aa.json" 2
