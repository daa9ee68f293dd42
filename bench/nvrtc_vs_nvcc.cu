// bench/nvrtc_vs_nvcc.cu: does a kernel built by nvcc run as fast as the NVRTC build that
// tunefarm measured? `tunefarm export` hands users a .cu to build with nvcc, while the farm
// compiles with NVRTC; the two compilers can emit different machine code from one source.
// Not part of tunefarm: the diagnostic behind "The farm's build and nvcc's" in docs/results.md.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o nvrtc_vs_nvcc bench/nvrtc_vs_nvcc.cu -lnvrtc
//   ./nvrtc_vs_nvcc [ROUNDS] [CUBIN_DIR] [CASE]   (from the repository root: it reads the sources;
//                                                  CASE: only the cases whose name contains it)
//
// Per case: the kernel of the repository's source built twice, by nvcc into this program and by
// NVRTC at run time with the options tunefarm passes (compile/compile.c), loaded with
// cudaLibraryLoadData as the measure child loads it; both launched through cudaLaunchKernel
// with the same buffers. Each output is checked first (C poisoned with NaN, 512 sampled
// entries against a double-precision dot product, relative L2 error at most 1e-5). Then ROUNDS
// paired rounds (default 30), the order alternating: per arm 10 launches, each after an L2
// flush and between two events; a round's ratio is nvcc's median over NVRTC's. Printed: each
// build's median of round medians, the median and range of the ratios, and the rounds whose
// median lay more than 20 us above that build's fastest. With CUBIN_DIR, NVRTC's cubins are
// written there (cuobjdump -sass reads them; the nvcc build's is in this program).
#include <nvrtc.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <string>
#include <vector>
#include <algorithm>
#include "../templates/matmul.cu"
#include "../kernels/matmul_regtile.cu"
#include "../kernels/matmul_pipelined.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define NK(x) do { nvrtcResult r_ = (x); if (r_ != NVRTC_SUCCESS) { printf("%s: %s\n", #x, nvrtcGetErrorString(r_)); exit(1); } } while (0)

struct Case {
  const char *name, *source, *expr;  // expr: what NVRTC instantiates, as tunefarm names it
  const void *nvcc;                  // the same kernel built into this program
  int M, N, K;
  dim3 grid, block;
  int smem;
};

// The template's launch (templates/matmul.json) for knobs BM, BN, BK, TM, TN, AK, KSLICE, PIPE,
// with SPLITK 1 only: split-K and stream-K take another grid and a zeroed C.
static void tmpl_launch(Case &c, int BM, int BN, int BK, int TM, int TN, int AK, int PIPE, int KSLICE) {
  c.grid = dim3((c.N + BN - 1) / BN, (c.M + BM - 1) / BM, 1);
  c.block = dim3((BM / TM) * (BN / TN) * KSLICE);
  c.smem = PIPE == 0 ? 0 : PIPE * 4 * ((AK ? BK * (BM + 4) : BM * (BK + 4)) + BK * BN);
}

static std::string slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { printf("cannot read %s (run from the repository root)\n", path); exit(1); }
  std::string s;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  fclose(f);
  return s;
}

// NVRTC's build of c, with tunefarm's options, loaded as the measure child loads it.
static cudaKernel_t nvrtc_build(const Case &c, const char *arch, const char *cubin_dir) {
  std::string src = slurp(c.source);
  nvrtcProgram p;
  NK(nvrtcCreateProgram(&p, src.c_str(), c.source, 0, NULL, NULL));
  NK(nvrtcAddNameExpression(p, c.expr));
  std::string archopt = std::string("--gpu-architecture=") + arch;
  const char *opts[] = {archopt.c_str(), "-std=c++17", "-lineinfo", "-DTF_NVRTC=1"};
  nvrtcResult rc = nvrtcCompileProgram(p, 4, opts);
  if (rc != NVRTC_SUCCESS) {
    size_t n;
    nvrtcGetProgramLogSize(p, &n);
    std::vector<char> log(n + 1);
    nvrtcGetProgramLog(p, log.data());
    printf("%s: NVRTC failed:\n%s\n", c.name, log.data());
    exit(1);
  }
  const char *lowered;
  NK(nvrtcGetLoweredName(p, c.expr, &lowered));
  std::string name = lowered;
  size_t n;
  NK(nvrtcGetCUBINSize(p, &n));
  std::vector<char> cubin(n);
  NK(nvrtcGetCUBIN(p, cubin.data()));
  NK(nvrtcDestroyProgram(&p));
  if (cubin_dir) {
    std::string path = std::string(cubin_dir) + "/" + c.name + ".cubin";
    FILE *f = fopen(path.c_str(), "wb");
    if (f) fwrite(cubin.data(), 1, n, f), fclose(f);
  }
  cudaLibrary_t lib;
  cudaKernel_t k;
  CK(cudaLibraryLoadData(&lib, cubin.data(), NULL, NULL, 0, NULL, NULL, 0));
  CK(cudaLibraryGetKernel(&k, lib, name.c_str()));
  return k;
}

static unsigned lcg(unsigned &x) { return x = x * 1664525u + 1013904223u; }
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Bufs { float *A, *B, *C; std::vector<float> hA, hB; };

static void fill(Bufs &b, int M, int N, int K, unsigned &x) {
  b.hA.resize((size_t)M * K);
  b.hB.resize((size_t)K * N);
  for (auto &v : b.hA) v = (lcg(x) >> 8) / 16777216.0f - 0.5f;
  for (auto &v : b.hB) v = (lcg(x) >> 8) / 16777216.0f - 0.5f;
  CK(cudaMalloc(&b.A, 4ull * M * K));
  CK(cudaMalloc(&b.B, 4ull * K * N));
  CK(cudaMalloc(&b.C, 4ull * M * N));
  CK(cudaMemcpy(b.A, b.hA.data(), 4ull * M * K, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b.B, b.hB.data(), 4ull * K * N, cudaMemcpyHostToDevice));
}

static void launch(const Case &c, const void *fn, Bufs &b, cudaStream_t st) {
  int M = c.M, N = c.N, K = c.K;
  void *args[] = {&b.A, &b.B, &b.C, &M, &N, &K};
  CK(cudaLaunchKernel(fn, c.grid, c.block, args, (size_t)c.smem, st));
}

// The output of one launch of fn against a double-precision reference on 512 sampled entries.
static double check(const Case &c, const void *fn, Bufs &b, cudaStream_t st, unsigned &x) {
  CK(cudaMemsetAsync(b.C, 0xFF, 4ull * c.M * c.N, st)); // NaN
  launch(c, fn, b, st);
  CK(cudaStreamSynchronize(st));
  std::vector<float> hC((size_t)c.M * c.N);
  CK(cudaMemcpy(hC.data(), b.C, 4ull * c.M * c.N, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (int t = 0; t < 512; t++) {
    int i = (int)(lcg(x) % (unsigned)c.M), j = (int)(lcg(x) % (unsigned)c.N);
    double ref = 0;
    for (int k = 0; k < c.K; k++) ref += (double)b.hA[(size_t)i * c.K + k] * b.hB[(size_t)k * c.N + j];
    double d = hC[(size_t)i * c.N + j] - ref;
    num += d * d;
    den += ref * ref;
  }
  return std::sqrt(num / den);
}

int main(int argc, char **argv) {
  int R = argc > 1 ? atoi(argv[1]) : 30, S = 10;
  const char *cubin_dir = argc > 2 && argv[2][0] ? argv[2] : NULL;
  const char *only = argc > 3 ? argv[3] : NULL;
  if (R < 2) R = 2;
  int dev = 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d%d", prop.major, prop.minor);
  int nvrtc_major, nvrtc_minor;
  NK(nvrtcVersion(&nvrtc_major, &nvrtc_minor));
  printf("%s, %s, NVRTC %d.%d, %d rounds of %d launches per build\n", prop.name, arch, nvrtc_major,
         nvrtc_minor, R, S);

  std::vector<Case> cases;
  auto add_tmpl = [&](const char *name, const char *expr, const void *fn, int M, int N, int K, int BM,
                      int BN, int BK, int TM, int TN, int AK, int PIPE, int KSLICE) {
    Case c = {name, "templates/matmul.cu", expr, fn, M, N, K};
    tmpl_launch(c, BM, BN, BK, TM, TN, AK, PIPE, KSLICE);
    cases.push_back(c);
  };
  // matmul-1024's start, its best known (docs/results.md) and 4096^3's best, at 1024^3 and
  // 3072x2048x1536; the committed controls at both.
  add_tmpl("start-1024", "tf_matmul<64,64,64,4,8,0,1,2,0,1,0,1,0>",
           (const void *)tf_matmul<64, 64, 64, 4, 8, 0, 1, 2, 0, 1, 0, 1, 0>, 1024, 1024, 1024, 64, 64, 64, 4,
           8, 0, 0, 1);
  add_tmpl("best1024-1024", "tf_matmul<64,128,64,8,8,0,4,1,2,1,1,2,1>",
           (const void *)tf_matmul<64, 128, 64, 8, 8, 0, 4, 1, 2, 1, 1, 2, 1>, 1024, 1024, 1024, 64, 128, 64,
           8, 8, 0, 2, 2);
  add_tmpl("best4096-1024", "tf_matmul<64,128,32,8,8,0,4,2,3,1,1,1,0>",
           (const void *)tf_matmul<64, 128, 32, 8, 8, 0, 4, 2, 3, 1, 1, 1, 0>, 1024, 1024, 1024, 64, 128, 32,
           8, 8, 0, 3, 1);
  add_tmpl("best4096-3072x2048x1536", "tf_matmul<64,128,32,8,8,0,4,2,3,1,1,1,0>",
           (const void *)tf_matmul<64, 128, 32, 8, 8, 0, 4, 2, 3, 1, 1, 1, 0>, 3072, 2048, 1536, 64, 128,
           32, 8, 8, 0, 3, 1);
  for (int big = 0; big < 2; big++) {
    int M = big ? 3072 : 1024, N = big ? 2048 : 1024, K = big ? 1536 : 1024;
    Case r = {big ? "regtile-3072x2048x1536" : "regtile-1024", "kernels/matmul_regtile.cu",
              "tf_matmul_regtile", (const void *)tf_matmul_regtile, M, N, K,
              dim3((N + 127) / 128, (M + 127) / 128), dim3(256), 0};
    Case p = {big ? "pipelined-3072x2048x1536" : "pipelined-1024", "kernels/matmul_pipelined.cu",
              "tf_matmul_pipelined", (const void *)tf_matmul_pipelined, M, N, K,
              dim3((N + 127) / 128, (M + 63) / 64), dim3(128), 51200};
    cases.push_back(r);
    cases.push_back(p);
  }

  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  size_t fb = 2ull * prop.l2CacheSize;
  char *fl;
  CK(cudaMalloc(&fl, fb));
  std::vector<cudaEvent_t> ev(2 * S);
  for (auto &e : ev) CK(cudaEventCreate(&e));
  unsigned x = 12345;
  int flushv = 0;
  printf("| case | NVRTC us | nvcc us | nvcc / NVRTC, median (min-max) | slow rounds NVRTC | nvcc | check NVRTC | nvcc |\n");
  printf("|---|---:|---:|---|---:|---:|---:|---:|\n");
  for (const Case &c : cases) {
    if (only && !strstr(c.name, only)) continue;
    const void *fn[2] = {(const void *)nvrtc_build(c, arch, cubin_dir), c.nvcc};
    CK(cudaFuncSetAttribute(c.nvcc, cudaFuncAttributeMaxDynamicSharedMemorySize, c.smem));
    CK(cudaKernelSetAttributeForDevice((cudaKernel_t)fn[0], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       c.smem, dev));
    Bufs b;
    fill(b, c.M, c.N, c.K, x);
    double err[2];
    for (int a = 0; a < 2; a++) err[a] = check(c, fn[a], b, st, x);
    if (!(err[0] <= 1e-5) || !(err[1] <= 1e-5)) {
      printf("%s: check failed (NVRTC %.2e, nvcc %.2e)\n", c.name, err[0], err[1]);
      return 1;
    }
    for (int w = 0; w < 10; w++) launch(c, fn[w % 2], b, st);
    std::vector<double> med[2], ratio;
    for (int r = 0; r < R; r++) {
      double m[2];
      for (int o = 0; o < 2; o++) {
        int a = (r + o) % 2; // NVRTC first in even rounds, nvcc first in odd ones
        for (int i = 0; i < S; i++) {
          CK(cudaMemsetAsync(fl, (flushv++) & 0xff, fb, st));
          CK(cudaEventRecord(ev[2 * i], st));
          launch(c, fn[a], b, st);
          CK(cudaEventRecord(ev[2 * i + 1], st));
        }
        CK(cudaStreamSynchronize(st));
        std::vector<double> t(S);
        for (int i = 0; i < S; i++) {
          float ms;
          CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
          t[i] = 1000.0 * ms;
        }
        m[a] = median(t);
        med[a].push_back(m[a]);
      }
      ratio.push_back(m[1] / m[0]);
    }
    int slow[2];
    for (int a = 0; a < 2; a++) {
      double lo = *std::min_element(med[a].begin(), med[a].end());
      slow[a] = (int)std::count_if(med[a].begin(), med[a].end(), [&](double v) { return v > lo + 20; });
    }
    printf("| %s | %.1f | %.1f | %.3f (%.3f-%.3f) | %d | %d | %.1e | %.1e |\n", c.name, median(med[0]),
           median(med[1]), median(ratio), *std::min_element(ratio.begin(), ratio.end()),
           *std::max_element(ratio.begin(), ratio.end()), slow[0], slow[1], err[0], err[1]);
    CK(cudaFree(b.A));
    CK(cudaFree(b.B));
    CK(cudaFree(b.C));
  }
  return 0;
}
