// templates/faulty.cu: a tiny kernel family for the fault tests: y[i] = 2 * x[i], or one
// deliberate fault chosen by the knob FAULT. Not a kernel to tune.
//
// Standalone build (append an explicit instantiation, e.g.
//   template __global__ void tf_faulty<0>(const float*, float*, int);):
//   nvcc -arch=sm_90 -std=c++17 -c templates/faulty.cu
// Checked against ref_scale2.cu: y = 2 * x.
//   FAULT 0  correct.
//   FAULT 1  thread 0 also stores 2^45 bytes past y: an illegal address, a sticky error that
//            ends the CUDA context (the measure child must die and be replaced).
//   FAULT 2  thread 0 executes __trap(): an illegal-instruction style sticky error.
//   FAULT 3  thread 0 spins on a flag in global memory that nothing ever sets: the kernel
//            never ends (the worker's deadline must kill the child). The flag is read
//            through a volatile pointer, so the loop cannot be optimized away.
//   FAULT 4  every y is 2*x + 1: the kernel ends normally with a wrong result.

namespace tf_faulty_tmpl {
__device__ int never_set;  // zero-initialized, written by no one
}

template <int FAULT>
__global__ void __launch_bounds__(256) tf_faulty(const float *__restrict__ x, float *__restrict__ y,
                                                 int n) {
  static_assert(FAULT >= 0 && FAULT <= 4, "FAULT is 0..4");
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = FAULT == 4 ? 2.0f * x[i] + 1.0f : 2.0f * x[i];
  if (i != 0) return;
  if (FAULT == 1) {
    volatile float *far = reinterpret_cast<volatile float *>(
        reinterpret_cast<unsigned long long>(y) + (1ull << 45));
    *far = 1.0f;
  } else if (FAULT == 2) {
    __trap();
  } else if (FAULT == 3) {
    volatile int *flag = &tf_faulty_tmpl::never_set;
    while (*flag == 0) {
    }
  }
}
