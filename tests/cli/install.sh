#!/usr/bin/env bash
# `cmake --install` installs the binary, the templates, the committed kernels and
# the campaigns; the installed binary finds them for its own campaigns and for a campaign
# outside any project; the binary configures without CMocka (only the tests need it). The
# installed binary carries a RUNPATH to the CUDA libraries it was linked against.
source "$(dirname "$0")/../lib.sh"
cd "$WORK"
unset TUNEFARM_ROOT
build="$(dirname "$TF")"
[ -f "$build/CMakeCache.txt" ] || { echo "SKIP: $build is not a CMake build folder"; exit 77; }

cmake --install "$build" --prefix "$WORK/prefix" >install.log || { cat install.log; fail "cmake --install failed"; }
p="$WORK/prefix"
for f in bin/tunefarm share/tunefarm/templates/matmul.json share/tunefarm/templates/matmul.cu \
  share/tunefarm/kernels/matmul_regtile.json share/tunefarm/kernels/matmul_regtile.cu \
  share/tunefarm/campaigns/matmul-1024.json include/tunefarm_ref.h; do
  [ -e "$p/$f" ] || fail "not installed: $f"
done
[ -z "$(find "$p/share" -name "*.c" -o -name "*.h")" ] || fail "C sources were installed as data"
echo "ok: installed $(find "$p" -type f | wc -l) files under $p"

# The installed binary finds the CUDA libraries it was linked against through its own RUNPATH,
# not through LD_LIBRARY_PATH or the loader's cache (ld.so.conf). --inhibit-cache makes the
# loader ignore /etc/ld.so.cache, as on a node whose ld.so.conf does not name the toolkit.
cudart="$(sed -n 's/^CUDA_cudart_LIBRARY:[A-Z]*=//p' "$build/CMakeCache.txt")"
[ -n "$cudart" ] || fail "CMakeCache.txt names no CUDA_cudart_LIBRARY"
cudadir="$(dirname "$cudart")"
runpath="$(readelf -d "$p/bin/tunefarm" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')"
case ":$runpath:" in
  *":$cudadir:"*) ;;
  *) readelf -d "$p/bin/tunefarm" >&2; fail "the installed binary's RUNPATH '$runpath' lacks the CUDA library folder '$cudadir'" ;;
esac
loader="$(readelf -l "$p/bin/tunefarm" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')"
env -u LD_LIBRARY_PATH "$loader" --inhibit-cache --list "$p/bin/tunefarm" >ldd.out 2>&1 ||
  { cat ldd.out; fail "the loader cannot resolve the installed binary's libraries without its cache"; }
grep -q "libcudart\.so.* => $cudadir/libcudart\.so" ldd.out ||
  { cat ldd.out; fail "libcudart is not resolved through the RUNPATH folder '$cudadir'"; }
expect_exit 0 env -u LD_LIBRARY_PATH "$loader" --inhibit-cache "$p/bin/tunefarm" --help
expect_exit 0 env -u LD_LIBRARY_PATH "$p/bin/tunefarm" --help
echo "ok: the installed binary's RUNPATH holds $cudadir; it runs without LD_LIBRARY_PATH or ld.so.cache"

# the installed binary: its own campaigns, and a campaign outside any project
expect_exit 0 "$p/bin/tunefarm" check "$p/share/tunefarm/campaigns/faulty.json"
mkdir -p mine
cp "$SRC/campaigns/faulty.json" mine/my.json
expect_exit 0 "$p/bin/tunefarm" check mine/my.json
grep -q "template 'faulty'" last.out || { cat last.out; fail "the installed templates were not found"; }
echo "ok: the installed binary finds the installed templates for mine/my.json"
# moved elsewhere, the install still finds its data beside the binary
mv "$p" "$WORK/moved"
expect_exit 0 "$WORK/moved/bin/tunefarm" check mine/my.json
echo "ok: a moved install finds its data beside its binary"

# without CMocka the binary configures; asking for the tests says what is missing
pc="$(pkg-config --variable pcfiledir libcjson)"
mkdir -p pc
cp "$pc/libcjson.pc" pc/
export PKG_CONFIG_LIBDIR="$WORK/pc" PKG_CONFIG_PATH=""
pkg-config --exists cmocka && fail "the test's pkg-config still finds CMocka"
cmake -S "$SRC" -B bare-configure >bare-configure.log 2>&1 || { cat bare-configure.log; fail "configure without CMocka failed"; }
grep -q "tests off" bare-configure.log || { cat bare-configure.log; fail "configure did not say the tests are off"; }
grep -qi cmocka bare-configure/build.ninja bare-configure/CMakeFiles/tfcore.dir/flags.make 2>/dev/null &&
  fail "the library is built against CMocka"
expect_exit 1 cmake -S "$SRC" -B bare-configure -DTF_TESTS=ON # the same cache: no second search
grep -q "TF_TESTS needs CMocka: install libcmocka-dev" last.err || { cat last.err; fail "no fix named"; }
echo "ok: the binary configures without CMocka; -DTF_TESTS=ON names the package"
