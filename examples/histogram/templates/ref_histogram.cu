// The reference of histogram.cu: one thread per element, one global atomicAdd each. Integer
// atomics are exact in any order, so the counts are the histogram whatever the schedule. It
// takes the template's arguments (x, bins, n, nbins); its bins start zeroed.
__global__ void ref_histogram(const unsigned char *x, unsigned int *bins, unsigned int n,
                              int nbins) {
  const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] < nbins) atomicAdd(&bins[x[i]], 1u);
}
