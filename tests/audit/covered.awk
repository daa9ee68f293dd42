# Checks a sample against the spaces it was drawn from: every single knob value and every
# pair of knob values found in the spaces must occur in the sample.
#
#   awk -f covered.awk SAMPLE LIST...    (lines "TAG v1 ... vK", as cover.awk reads them)
#
# Prints each value or pair that no sampled configuration has, then a summary line; exit
# status 1 when anything is missing.
FNR == NR {
  for (i = 2; i <= NF; i++) {
    have[(i - 1) "=" $i] = 1
    for (j = i + 1; j <= NF; j++) have[(i - 1) "=" $i "," (j - 1) "=" $j] = 1
  }
  sampled++
  next
}
{
  for (i = 2; i <= NF; i++) {
    want((i - 1) "=" $i)
    for (j = i + 1; j <= NF; j++) want((i - 1) "=" $i "," (j - 1) "=" $j)
  }
}
function want(p) {
  if (p in seen) return
  seen[p] = 1
  total++
  if (!(p in have)) { missing++; print "not compiled: knob=value " p " (knobs numbered from 1 in template order)" }
}
END {
  printf "%d sampled configurations hold %d of the %d knob values and pairs of the space\n",
    sampled, total - missing, total
  exit missing > 0
}
