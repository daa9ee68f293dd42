// bad: a deliberate syntax error (a missing ';' on line 4), so that test_compile can check
// NVRTC's refusal and that the log names this file and line.
__global__ void bad(float *y) {
  y[0] = 1.0f
}
