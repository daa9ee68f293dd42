#if __has_include("a.cuh")
#endif
#define F "a.cuh"
#include F
