// C library functions that move or read memory, called in device code: an error naming the
// function and its line (nvcc refuses them too). Host code, members and other namespaces'
// functions may call them; the first call in device code is on line 10.
#include <cstdio>
#include <cstring>
struct Text { int strlen() const; };
namespace mine { __device__ int strcmp(const char*, const char*) { return 0; } }
void host(char* d, const char* s) { std::strncpy(d, s, 4); snprintf(d, 4, "%s", s); }
__device__ int member(const Text& t, const char* s) { return t.strlen() + mine::strcmp(s, s); }
__global__ void kernel(char* d, const char* s) { std::strncpy(d, s, 64); }
