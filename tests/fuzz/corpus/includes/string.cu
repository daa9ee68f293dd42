const char *s = "#include \"a.cuh\"";
??=include "b.cuh"
