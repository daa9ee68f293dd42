/* tmap: the CUtensorMap of a job's tensor-map argument (common/spec.h, SPEC_ARG_TMAP) on one
 * device buffer, by the driver's cuTensorMapEncodeTiled through the runtime's entry point (no
 * libcuda): the arm's extents and box, unit element strides, the buffer's element type, the
 * argument's swizzle, 256-byte L2 promotion, zeros past the extents. */
#ifndef TF_TMAP_H
#define TF_TMAP_H

#include "common/err.h"
#include "common/msg.h"

/* Argument a of j on the buffer at dev into out (SPEC_TMAP_BYTES, 64-byte aligned): 0, or -1
 * with e naming it (TF_EXIT_FAIL: a driver without TMA, or a map it refuses). */
int tmap_encode(const job *j, int a, const launch_geom *g, void *dev, void *out, tf_err *e);

/* The name of the CUtensorMapDataType that tmap_encode gives a buffer of reference_type t
 * ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"), for code that encodes the same map (tools/export). */
const char *tmap_type_name(int t);

#endif
