#!/usr/bin/env bash
# `tunefarm measure` reads a job's id as the whole number it was sent as, or refuses the job:
# id 2^64 was answered as job 0. The refusal names the key and claims no id; a job refused for
# another reason names its id, read as sent; a good id comes back as it went.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
arm() {
  echo "{\"role\":\"$1\",\"name_expr\":\"tf_faulty<0>\",\"template\":true,\"config\":[0],\"grid\":[4,1,1],\"block\":[256,1,1],\"smem\":0,\"counts\":[1024,1024],\"clear\":[0,0],\"iargs\":[0,0,1024],\"fault\":\"\"}"
}
job() { # job ID [TOLERANCE]
  echo "{\"type\":\"job\",\"id\":$1,\"generation\":1,\"campaign\":\"ids\",\"root\":\"$SRC\",\"sources\":[\"templates/faulty.cu\"],\"specs\":[\"templates/faulty.json\"],\"dims\":{\"N\":1024},\"buffers\":[{\"name\":\"x\",\"output\":false},{\"name\":\"y\",\"output\":true}],\"args\":[{\"buffer\":0},{\"buffer\":1},{\"int\":true}],\"arms\":[$(arm best),$(arm new),$(arm control)],\"reference\":{\"kernel\":\"ref_scale2\",\"source\":\"templates/ref_scale2.cu\",\"grid\":[4,1,1],\"block\":[256,1,1],\"smem\":0,\"iargs\":[0,0,1024]},\"tolerance\":${2:-1e-06},\"measure\":{\"burn_in\":1,\"rounds\":3,\"samples\":3,\"input_sets\":1,\"seed\":1}}"
}
{
  job 18446744073709551616
  job 9007199254740993
  job 7 null
  job 999999999999999
} >in.txt
expect_exit 0 "$TF" measure --backend sim <in.txt
[ "$(wc -l <last.out)" -eq 4 ] || { cut -c1-160 last.out; fail "expected 4 replies"; }
for n in 1 2; do
  r=$(sed -n ${n}p last.out)
  echo "$r" | grep -q '"type":"error"' || fail "reply $n is not an error: ${r:0:160}"
  echo "$r" | grep -q "key 'id' must be a whole number" || fail "reply $n names no key: $r"
  echo "$r" | grep -q '"id"' && fail "reply $n claims an id: $r"
done
sed -n 3p last.out | grep -q '"type":"error","id":7,' || fail "the refusal of job 7 does not name it"
sed -n 4p last.out | grep -q '"type":"result","id":999999999999999,"status":"ok"' ||
  { sed -n 4p last.out | cut -c1-160; fail "the largest id did not come back as sent"; }
echo "ok: ids out of range refused without a claimed id, ids in range answered as sent"
