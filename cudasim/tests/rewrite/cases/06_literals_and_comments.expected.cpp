#line 1 "@INPUT@"
// Nothing inside comments or literals changes: k<<<1, 1>>>(); extern __shared__ float s[];
/* A block comment with a launch k<<<grid, block>>>(x);
   static __shared__ float tile[16];
   extern __shared__ float smem[]; and it spans lines */
// A comment continued with a backslash: k<<<1, 1>>>(); \
   still a comment: k<<<2, 2>>>(); static __shared__ int z;
__global__ void k(const char*) {} CUDASIM_KNOWN_KERNEL(k, (const char*))

void run() {
    const char* launch = "k<<<1, 1>>>(x); extern __shared__ float s[];";
    const char* escaped = "quote \" then k<<<1, 1>>>() and \\";
    const char* spliced = "first half k<<<1, \
1>>>() second half";
    const char* raw = R"(k<<<1, 1>>>(); " no end here)";
    const char* raw_delim = R"cuda(k<<<1, 1>>>() )" still inside
extern __shared__ float inside_raw[];
static __shared__ int also_inside;)cuda";
    const wchar_t* wide = LR"x(<<<)x";
    const char* utf8 = u8"<<<";
    char open = '<', quote = '"', apostrophe = '\'', backslash = '\\';
    wchar_t wide_char = L'<';
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 1)(">>>");
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, /* >>> */ 1)("/* not a comment */ // nor this");
}
