# A set of configurations in which every pair of knob values that occurs together in some
# reachable configuration occurs together at least once: the sampled audit compiles this
# set, so every value of every knob is compiled beside every value of every other knob it
# can meet.
#
#   awk -f cover.awk LIST...      (a line: "TAG v1 v2 ... vK", the knobs in template order;
#                                   TAG says which campaign reaches it)
#
# Prints the chosen lines, greedily: each step takes the first line that covers the most
# pairs not yet covered. The input order fixes the result.
{
  n++
  line[n] = $0
  k = 0
  for (i = 2; i <= NF; i++)
    for (j = i + 1; j <= NF; j++) {
      p = i "=" $i "," j "=" $j
      key[n, ++k] = p
      if (!(p in need)) { need[p] = 1; left++ }
    }
  npairs[n] = k
  gain[n] = k
}
END {
  while (left > 0) {
    best = 0
    bestgain = 0
    # A line's gain only falls as pairs are covered, so its last count bounds it: a line
    # that cannot beat this step's best so far is not recounted.
    for (c = 1; c <= n; c++) {
      if (taken[c] || gain[c] <= bestgain) continue
      g = 0
      for (p = 1; p <= npairs[c]; p++) if (key[c, p] in need) g++
      gain[c] = g
      if (g > bestgain) { bestgain = g; best = c }
    }
    taken[best] = 1
    for (p = 1; p <= npairs[best]; p++)
      if (key[best, p] in need) { delete need[key[best, p]]; left-- }
    print line[best]
  }
}
