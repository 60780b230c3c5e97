// An error in an included project header is reported at the header's own line.
#include "94_error_in_header/bad.cuh"
void run() { k<<<1, 1>>>(); }
