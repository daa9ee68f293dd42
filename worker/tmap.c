/* tmap: see worker/tmap.h. */
#include "worker/tmap.h"

#include <cuda.h> /* the tensor map's types and enums only: libcuda is not linked */
#include <cuda_runtime_api.h>

#include "common/reference.h" /* defines: REFERENCE_*, reference_type_size */

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                              const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                              const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

_Static_assert(sizeof(CUtensorMap) == SPEC_TMAP_BYTES, "a tensor map is 128 bytes");

/* The driver's entry point, asked for once: the answer does not change while a process lives. */
static encode_fn encoder(tf_err *e) {
  static encode_fn fn;
  static int asked;
  if (!asked) {
    void *p = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    asked = 1;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = (encode_fn)p;
    (void)cudaGetLastError();
  }
  if (!fn)
    tf_fail(e, TF_EXIT_FAIL, "this driver has no cuTensorMapEncodeTiled: a tensor map needs a "
                             "CUDA 12 driver or later");
  return fn;
}

/* A buffer's element type as TMA's: one list for the value and its name. TMA copies bytes, so
 * a signed byte travels as an unsigned one; anything else not listed is FLOAT32. */
#define TMAP_TYPES(X)                                                                      \
  X(REFERENCE_F64, FLOAT64) X(REFERENCE_F16, FLOAT16) X(REFERENCE_BF16, BFLOAT16)         \
  X(REFERENCE_I8, UINT8) X(REFERENCE_U8, UINT8) X(REFERENCE_I32, INT32)                   \
  X(REFERENCE_U32, UINT32) X(REFERENCE_I64, INT64)

static CUtensorMapDataType data_type(int t) {
#define TMAP_VALUE(r, n) if (t == r) return CU_TENSOR_MAP_DATA_TYPE_##n;
  TMAP_TYPES(TMAP_VALUE)
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

const char *tmap_type_name(int t) {
#define TMAP_NAME(r, n) if (t == r) return "CU_TENSOR_MAP_DATA_TYPE_" #n;
  TMAP_TYPES(TMAP_NAME)
  return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
}

static CUtensorMapSwizzle swizzle(int bytes) {
  return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
         : bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
         : bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                       : CU_TENSOR_MAP_SWIZZLE_NONE;
}

int tmap_encode(const job *j, int a, const launch_geom *g, void *dev, void *out, tf_err *e) {
  encode_fn enc = encoder(e);
  if (!enc) return tf_wrap(e, "tensor map args[%d]", a);
  const int t = j->arg_tmap[a], rank = j->arg_rank[a], type = j->buf_type[j->arg_buffer[a]];
  cuuint64_t dims[SPEC_TMAP_RANK], strides[SPEC_TMAP_RANK];
  cuuint32_t box[SPEC_TMAP_RANK], unit[SPEC_TMAP_RANK];
  cuuint64_t stride = (cuuint64_t)reference_type_size(type);
  for (int i = 0; i < rank; i++) {
    dims[i] = (cuuint64_t)g->tmap_dim[t][i];
    box[i] = (cuuint32_t)g->tmap_box[t][i];
    unit[i] = 1;
    stride *= dims[i];
    strides[i] = stride; /* strides[i] is dimension i+1's; the innermost has none */
  }
  CUresult r = enc((CUtensorMap *)out, data_type(type), (cuuint32_t)rank, dev, dims, strides, box,
                   unit, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle(j->arg_swizzle[a]),
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return tf_fail(e, TF_EXIT_FAIL, "tensor map args[%d]: cuTensorMapEncodeTiled refused it "
                   "(CUresult %d)", a, (int)r);
  return 0;
}
