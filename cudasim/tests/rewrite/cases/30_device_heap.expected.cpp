#line 1 "@INPUT@"
// malloc, free, new and delete in device code use the device heap; placement new, operator new,
// deleted functions and host code stay.
#include <cstdlib>
#include <new>
struct Node { int value; Node* next; };
struct NoCopy { NoCopy(const NoCopy&) = delete; };
__device__ Node* push(Node* head, int v) {
    Node* n = new (::cudasim::detail::device_heap) Node{v, head};
    return n;
}
__global__ void kernel(int n) {
    int* scratch = (int*)::cudasim::detail::device_malloc(n * sizeof(int));
    float* many = new (::cudasim::detail::device_heap) float[n];
    Node* list = push(nullptr, 1);
    alignas(Node) char slot[sizeof(Node)];
    Node* placed = new (slot) Node{2, nullptr};
    void* raw = ::operator new(4, std::nothrow);
    (void)placed; (void)raw;
    ::cudasim::detail::device_delete(list);
    ::cudasim::detail::device_delete_array(many);
    ::cudasim::detail::device_delete((reinterpret_cast<Node*>(::cudasim::detail::device_malloc(sizeof(Node))))), ::cudasim::detail::device_free(scratch);
} CUDASIM_KNOWN_KERNEL(kernel, (int n))
int main() { int* p = new int(3); delete p; void* q = malloc(4); free(q); }
