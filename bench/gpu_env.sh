# Sourced before building on a GPU machine that reaches no package registry: unpacks the
# cJSON and CMocka Debian packages carried in .gpu-deps/ under /opt/deps and points
# pkg-config and the loader there, and CMake's zlib search too where the machine has no zlib
# headers (carry zlib1g-dev's package: its static libz.a links with no runtime library);
# then build with cmake as usual (bench/reproduce.sh does this by itself when .gpu-deps/
# exists and pkg-config finds no cJSON).
#
#   source bench/gpu_env.sh && cmake -B build && cmake --build build -j
for f in .gpu-deps/*.deb; do [ -e "$f" ] && dpkg -x "$f" /opt/deps; done
export PKG_CONFIG_SYSROOT_DIR=/opt/deps
export PKG_CONFIG_LIBDIR=/opt/deps/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# libz.so there links to Debian's runtime library, which the machine may not have: without
# it, CMake takes the static libz.a.
[ -e /opt/deps/usr/lib/x86_64-linux-gnu/libz.so ] || rm -f /opt/deps/usr/lib/x86_64-linux-gnu/libz.so
[ -e /usr/include/zlib.h ] || [ ! -e /opt/deps/usr/include/zlib.h ] || export ZLIB_ROOT=/opt/deps/usr
# mpirun refuses root unless told; GPU machines are often used as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast off: NCCL, torch and NVSHMEM otherwise try it where it is not set up.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
