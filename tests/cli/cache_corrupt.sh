#!/usr/bin/env bash
# A cubin cache entry that is not what the cache wrote (cut short, text, a byte changed, a
# symbolic link, a FIFO, a folder, empty; its .names changed) is never exported as the cubin
# the farm measured: `tunefarm export` says once which entry is corrupt, compiles again and
# writes NVRTC's cubin; a FIFO does not hang it. No GPU needed (NVRTC only).
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
export TUNEFARM_ROOT="$SRC" TUNEFARM_CACHE="$WORK/cache"
export_mm() {
  timeout 60 "$TF" export -o out --name tf_mm --arch sm_90 --config VEC=4 \
    "$SRC/campaigns/matmul-1024.json" >out.txt 2>err.txt
}
export_mm || fail "the first export failed"
cp out/tf_mm.cubin good.cubin
cp out/tf_mm.cu good.cu
entry=$(echo cache/*.cubin)
names="${entry%.cubin}.names"
[ -f "$entry" ] && [ -f "$names" ] || fail "no single cache entry: $(ls cache)"
echo "the secret of another file" >secret.txt
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
is_elf good.cubin || fail "the first export wrote no ELF file"

# spoil WHAT: replace the entry (or its names) by something the cache did not write
spoil() {
  rm -rf "$entry"
  case "$1" in
  truncated) head -c 1000 good.cubin >"$entry" ;;
  text) echo "not a cubin" >"$entry" ;;
  byte) cp "$2" "$entry" && printf 'X' | dd of="$entry" bs=1 seek=2000 conv=notrunc 2>/dev/null ;;
  symlink) ln -s "$WORK/secret.txt" "$entry" ;;
  fifo) mkfifo "$entry" ;;
  folder) mkdir "$entry" ;;
  empty) : >"$entry" ;;
  names) cp "$2" "$entry" && sed -i 's/^_Z/_Zx/' "$names" ;;
  esac
  if [ "$1" = names ]; then cp "$names" spoiled
  elif [ -f "$entry" ]; then cp "$entry" spoiled
  else : >spoiled; fi
}

cp "$entry" whole.entry
cp "$names" whole.names
for what in truncated text byte symlink fifo folder empty names; do
  spoil "$what" whole.entry
  rc=0
  export_mm || rc=$?
  [ "$rc" -ne 124 ] || fail "$what: export hangs"
  [ "$rc" -eq 0 ] || { cat err.txt >&2; fail "$what: export failed ($rc)"; }
  # NVRTC's cubin is not always the same bytes from one compile to the next: the export must
  # be a CUDA ELF image, not the spoiled bytes, and the entry the compile wrote again.
  is_elf out/tf_mm.cubin || fail "$what: exported a cubin that is no ELF file"
  ! cmp -s out/tf_mm.cubin spoiled || fail "$what: exported the spoiled entry"
  [ "$what" = folder ] || cmp -s -n "$(stat -c %s out/tf_mm.cubin)" out/tf_mm.cubin "$entry" ||
    fail "$what: the exported cubin is not the one the compile kept"
  cmp -s out/tf_mm.cu good.cu || fail "$what: exported code for another kernel name"
  grep -q "compiled now" out.txt || fail "$what: a corrupt entry counted as found in the cache"
  [ "$(grep -c "^cache: entry '.*' is corrupt (" err.txt)" -ge 1 ] ||
    { cat err.txt >&2; fail "$what: the corrupt entry is not reported"; }
  [ "$what" = folder ] || grep -q "evicted, compiling again" err.txt ||
    { cat err.txt >&2; fail "$what: not evicted"; }
  [ "$what" = folder ] || [ -f "$entry" ] || fail "$what: the entry is not written again"
  [ -f secret.txt ] || fail "$what: eviction followed a link"
  rm -rf "$entry"
  cp whole.entry "$entry"
  cp whole.names "$names"
  export_mm || fail "$what: the export after it failed"
  grep -q "found in the farm's cache" out.txt || fail "$what: the rewritten entry is not a hit"
  [ ! -s err.txt ] || { cat err.txt >&2; fail "$what: a whole entry reported"; }
done
echo "cache_corrupt: ok"
