#line 1 "@INPUT@"
// Digit separators are not character literals, so the launches after them are still found.
__global__ void k(long long, double) {} CUDASIM_KNOWN_KERNEL(k, (long long, double))

void run() {
    constexpr long long million = 1'000'000; ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 1)(million, 0.0);
    constexpr unsigned mask = 0xFFFF'FFFFu; ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 2, 2)(mask, 1'0.5e+1'0);
    constexpr auto bits = 0b1010'1010; ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 3, 3)(bits, .5'0e-2);
    char c = 'a'; ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 4, 4)(c, 1'2.0);
}
