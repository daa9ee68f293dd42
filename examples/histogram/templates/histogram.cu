// Histogram of the n bytes x[i], each below nbins, into bins[nbins] of 32-bit counts (bins is
// zeroed before every launch). A block of BLOCK threads counts BLOCK*ITEMS consecutive
// elements, thread t taking t, t + BLOCK, ... (coalesced). SHARED 0: each element is one
// atomicAdd on bins in global memory. SHARED 1: the block counts into its own copy of the
// bins in dynamic shared memory (4*nbins bytes), then adds each non-zero count to bins with
// one global atomic: contention moves from L2 to the SM.
template <int BLOCK, int ITEMS, int SHARED>
__global__ void __launch_bounds__(BLOCK)
tf_histogram(const unsigned char *__restrict__ x, unsigned int *__restrict__ bins,
             unsigned int n, int nbins) {
  extern __shared__ unsigned int sh[];
  const unsigned int base = blockIdx.x * (unsigned int)(BLOCK * ITEMS) + threadIdx.x;
  if (SHARED) {
    for (int b = threadIdx.x; b < nbins; b += BLOCK) sh[b] = 0;
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    const unsigned int k = base + i * BLOCK;
    if (k < n) atomicAdd(SHARED ? &sh[x[k]] : &bins[x[k]], 1u);
  }
  if (SHARED) {
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += BLOCK)
      if (sh[b]) atomicAdd(&bins[b], sh[b]);
  }
}
