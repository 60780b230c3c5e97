// A template argument list right before the closing >>> (threads_v<T>>>>): nvcc takes the
// first >>> as the end of the configuration and rejects the launch, and so does the rewrite.
template <class T> constexpr int threads_v = 32;
template <class T> __global__ void k(T* p) {}

template <class T>
void run(T* p) {
    k<T><<<1, threads_v<T>>>>(p);
}
