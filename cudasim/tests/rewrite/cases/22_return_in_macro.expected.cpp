#line 1 "@INPUT@"
// A `return` hidden in a macro cannot become `co_return`, so a kernel with barriers whose body
// names a macro that returns (directly, through another macro, over spliced lines) stays on
// fibers; macros that do not return, and `return` in a macro's comments or strings, do not
// matter. A `return` passed as a macro argument is in the kernel's text and is converted; a
// barrier in a macro stays a plain call (a fiber barrier, which a coroutine kernel may use).
#define GUARD(condition) if (!(condition)) return;
#define CHECK_INDEX(i, n) \
    do {                  \
        GUARD((i) < (n))  \
    } while (0)
#define BAIL return
#define SYNC_AND(x) __syncthreads(); x
#define NOT_RETURNING(x) /* return */ (void)"return"; (x)
#define WRAP(statement) statement

__global__ void guarded(int* p, int n) {
    GUARD(threadIdx.x < n)
    __syncthreads();
    p[threadIdx.x] = 1;
} CUDASIM_KNOWN_KERNEL(guarded, (int* p, int n))
__global__ void checked(int* p, int n) {
    __syncthreads();
    CHECK_INDEX(threadIdx.x, n);
} CUDASIM_KNOWN_KERNEL(checked, (int* p, int n))
__global__ void bails(int* p) {
    if (p == nullptr) BAIL;
    __syncthreads();
} CUDASIM_KNOWN_KERNEL(bails, (int* p))
__global__ void harmless_macros(int* p) { /* cudasim: not fissioned: `return` */
    NOT_RETURNING(p[0] = 1);
    co_await ::cudasim::detail::await_syncthreads();
    if (p[0] == 0) co_return;
} CUDASIM_KNOWN_KERNEL(harmless_macros, (int* p))
__global__ void return_as_argument(int* p) { /* cudasim: not fissioned: a statement could not be read */
    co_await ::cudasim::detail::await_syncthreads();
    WRAP(if (p[0] == 0) co_return;)
} CUDASIM_KNOWN_KERNEL(return_as_argument, (int* p))
__global__ void barrier_in_macro(int* p) { /* cudasim: not fissioned: `SYNC_AND` may wait for other threads or leave the kernel */
    co_await ::cudasim::detail::await_syncthreads();
    SYNC_AND(p[0] = 1);
} CUDASIM_KNOWN_KERNEL(barrier_in_macro, (int* p))
__global__ void guard_without_barrier(int* p, int n) { GUARD(n > 0) p[0] = 1; } CUDASIM_KNOWN_KERNEL(guard_without_barrier, (int* p, int n))
