// memcpy, memmove and memset in device code, unqualified, std:: or :: qualified, or __builtin_,
// become the simulator's counted ones (the C library's are not instrumented), also where only
// their address is taken (a call through it would not be counted); host code, members and other
// namespaces' functions stay.
#include <cstring>
struct Buffer { void memcpy(const void*, unsigned); };
namespace mine { __device__ void* memset(void* p, int, unsigned long) { return p; } }
__device__ void fill(float* p, int n) { memset(p, 0, n * sizeof(float)); }
__host__ __device__ void copy(float* d, const float* s, int n) { std::memcpy(d, s, n * sizeof(float)); }
__global__ void kernel(float* d, const float* s, int n, Buffer* b) {
    ::memmove(d, s, n * sizeof(float));
    __builtin_memcpy(d + n, s, sizeof(float));
    std :: memset (d, 0, sizeof(float));
    mine::memset(d, 0, 4);
    b->memcpy(s, 4);
    auto* function = &memcpy;
    (void)function;
}
int main() { float a[2] = {1, 2}, b[2]; std::memcpy(b, a, sizeof a); memset(a, 0, sizeof a); }
