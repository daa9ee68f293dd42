# Helpers of the audit tests, sourced after tests/lib.sh (TF, SRC, WORK): campaigns at other
# shapes, a campaign's reachable configurations as lines of values, --where expressions that
# select given configurations, and one audit with its checks.
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
AUDIT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# reshaped NAME CAMPAIGN 'DIMS': $WORK/NAME.json, the campaign with its problem replaced,
# e.g. reshaped matmul-odd matmul-1024 '"M": 4095, "N": 4097, "K": 1023'.
reshaped() {
  sed -E "s/\"problem\": \{[^}]*\}/\"problem\": {$3}/" "$SRC/campaigns/$2.json" >"$WORK/$1.json"
  grep -q "\"problem\": {$3}" "$WORK/$1.json" || fail "$2: no problem line to replace"
}

# knob_names CAMPAIGN_FILE: the template's knobs in order, from `check`'s start line.
knob_names() {
  "$TF" check "$1" | sed -n 's/^  start: *//p' | sed -E 's/=[^ ]*//g'
}

# listed TAG CAMPAIGN_FILE [WHERE]: the reachable configurations (where WHERE holds), one a
# line as "TAG v1 v2 ... vK".
listed() {
  "$TF" audit --list ${3:+--where "$3"} "$2" </dev/null | sed -E "s/^[^<]*<(.*)>\$/$1 \\1/; s/,//g"
}

# where_of 'KNOB...' < LINES: --where expressions that hold exactly for the listed
# configurations, as few as fit under the expression length limit, one a line.
where_of() {
  awk -v names="$1" '
    BEGIN { k = split(names, name, " ") }
    {
      t = "("
      for (i = 1; i <= k; i++) t = t (i > 1 ? "&&" : "") name[i] "==" $(i + 1)
      t = t ")"
      if (e != "" && length(e) + length(t) + 2 > 3800) { print e; e = "" }
      e = e (e == "" ? "" : "||") t
    }
    END { if (e != "") print e }'
}

# sampled_where 'KNOB...' MOD: a fixed sample of about one configuration in MOD, by a
# linear hash of the knob values.
sampled_where() {
  local names=($1) primes=(3 5 7 11 13 17 19 23 29 31 37 41 43 47 53 59 61 67 71 73) e="" i
  for i in "${!names[@]}"; do e+="${e:+ + }${primes[$i]}*${names[$i]}"; done
  echo "($e) % $2 == 0"
}

# audit_where LABEL CAMPAIGN_FILE RANKS [WHERE [COUNT]]: audit under mpirun; it must select
# COUNT configurations (when given) and compile every one with no failure (the control, a
# committed kernel, may be compiled beside them). The output stays in $WORK/LABEL.out.
audit_where() {
  local label=$1 file=$2 ranks=$3 where=${4:-} count=${5:-} t0 t1 selected compiled
  t0=$(date +%s.%N)
  "${MPIRUN[@]}" -np "$ranks" "$TF" audit ${where:+--where "$where"} "$file" </dev/null >"$WORK/$label.out" 2>&1 ||
    { cat "$WORK/$label.out"; fail "$label: audit failed"; }
  t1=$(date +%s.%N)
  grep -q ', failed 0;' "$WORK/$label.out" || { cat "$WORK/$label.out"; fail "$label: failures"; }
  selected=$(sed -n 's/^audit: \([0-9]*\) .*/\1/p' "$WORK/$label.out")
  compiled=$(sed -n 's/^audit: .*compiled \([0-9]*\), failed 0;.*/\1/p' "$WORK/$label.out")
  [ -z "$count" ] || [ "$selected" = "$count" ] || fail "$label: $count configurations chosen, $selected selected"
  [ "${compiled:-0}" -ge "${selected:-1}" ] || fail "$label: $selected configurations selected, ${compiled:-0} compiled"
  echo "$label: $(tail -1 "$WORK/$label.out" | sed 's/^audit: //') ($(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s wall)"
}
