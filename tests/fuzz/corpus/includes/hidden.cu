/* x */ # /* y */ inc\
lude "../a.cuh"
%:include <cstdio>
