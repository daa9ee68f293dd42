#!/usr/bin/env bash
# A template and a committed kernel bring in nothing from outside their
# folder: a .cu that is a link out of templates/ (or kernels/), and any #include but a quoted
# file of that folder, are refused by `check` as bad input naming the file, before NVRTC
# ever sees them (NVRTC's log, with the included file's text, would land in the ledger).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
mkdir -p root/campaigns root/templates root/kernels elsewhere
cp "$SRC"/templates/* root/templates/
cp "$SRC"/kernels/*.json "$SRC"/kernels/*.cu root/kernels/
cp "$SRC/campaigns/matmul-1024.json" root/campaigns/
export TUNEFARM_ROOT="$WORK/root"
camp=root/campaigns/matmul-1024.json
expect_exit 0 "$TF" check "$camp"
n=0
# refused WANT: check exits 2 with one line naming the template's file and WANT
refused() {
  expect_exit 2 "$TF" check "$camp"
  grep -qF -- "$1" last.err || { cat last.err; fail "message lacks '$1'"; }
  [ "$(wc -l <last.err)" -eq 1 ] || { cat last.err; fail "more than one line"; }
  n=$((n + 1))
  echo "ok: $(cut -c1-200 last.err)"
}

mv root/templates/matmul.cu elsewhere/matmul.cu
ln -s "$WORK/elsewhere/matmul.cu" root/templates/matmul.cu
refused "kernel source '$WORK/root/templates/matmul.cu' leads to '$WORK/elsewhere/matmul.cu', outside its folder"
rm root/templates/matmul.cu

for inc in '"/etc/hostname"' '"../kernels/matmul_regtile.cu"' '<cstdio>' '"nosuch.cuh"'; do
  { echo "#include $inc"; cat elsewhere/matmul.cu; } >root/templates/matmul.cu
  refused "key 'source': kernel source '$WORK/root/templates/matmul.cu': line 1: #include"
done
# a header of the folder is fine, and what it includes obeys the same rule
echo '#include "/etc/hostname"' >root/templates/helpers.cuh
{ echo '#include "helpers.cuh"'; cat elsewhere/matmul.cu; } >root/templates/matmul.cu
refused "helpers.cuh': line 1: #include must name a file of the kernel's folder"
echo '// nothing yet' >root/templates/helpers.cuh
expect_exit 0 "$TF" check "$camp"
cp elsewhere/matmul.cu root/templates/matmul.cu

# a committed kernel (the campaign's control) is held to the same rule in kernels/
cp root/kernels/matmul_regtile.cu elsewhere/
{ echo '#include "/etc/passwd"'; cat elsewhere/matmul_regtile.cu; } >root/kernels/matmul_regtile.cu
refused "kernel source '$WORK/root/kernels/matmul_regtile.cu': line 1: #include must name"
echo "ok: $n templates and kernels reaching outside their folder refused"
