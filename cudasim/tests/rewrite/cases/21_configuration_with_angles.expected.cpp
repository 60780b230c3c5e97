#line 1 "@INPUT@"
// `>` inside a launch configuration: shifts, comparisons and template argument lists. The first
// `>>>` closes the configuration, as nvcc reads it, so a template argument list at its end
// needs a space or parentheses (see 93_error_template_before_close).
template <class T> constexpr int threads_v = 128 / sizeof(T);
template <class T> struct Traits { static constexpr int threads = 64; };
template <class T> __global__ void k(T* p) {}

template <class T>
void run(T* p, int n) {
    ::cudasim::launch_inline("k<T>", CUDASIM_INLINE_KERNEL(k<T>), 1, threads_v<T> )(p);
    ::cudasim::launch_inline("k<T>", CUDASIM_INLINE_KERNEL(k<T>), 1, (threads_v<T>))(p);
    ::cudasim::launch_inline("k<T>", CUDASIM_INLINE_KERNEL(k<T>), 1, Traits<T>::threads)(p);
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), n >> 5, 32)(p);
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), n>>5, 32)(p);
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), (n > 0 ? n : 1), 32)(p);
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), n > 0 ? n : 1, (n >> 1) > 32 ? 64 : 32)(p);
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, Traits<Traits<T> >::threads)(p);
}
