// malloc, free, new and delete in device code use the device heap; placement new, operator new,
// deleted functions and host code stay.
#include <cstdlib>
#include <new>
struct Node { int value; Node* next; };
struct NoCopy { NoCopy(const NoCopy&) = delete; };
__device__ Node* push(Node* head, int v) {
    Node* n = new Node{v, head};
    return n;
}
__global__ void kernel(int n) {
    int* scratch = (int*)malloc(n * sizeof(int));
    float* many = new float[n];
    Node* list = push(nullptr, 1);
    alignas(Node) char slot[sizeof(Node)];
    Node* placed = new (slot) Node{2, nullptr};
    void* raw = ::operator new(4, std::nothrow);
    (void)placed; (void)raw;
    delete list;
    delete[] many;
    delete (reinterpret_cast<Node*>(std::malloc(sizeof(Node)))), std::free(scratch);
}
int main() { int* p = new int(3); delete p; void* q = malloc(4); free(q); }
