# Sourced on the GPU machines, which have no cJSON or CMocka: unpack the Debian packages
# carried in .gpu-deps/ (copies of ../shared/debs) under /opt/deps and point pkg-config
# and the loader there. Then build with cmake as usual.
for f in .gpu-deps/*.deb; do dpkg -x "$f" /opt/deps; done
export PKG_CONFIG_SYSROOT_DIR=/opt/deps
export PKG_CONFIG_LIBDIR=/opt/deps/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
