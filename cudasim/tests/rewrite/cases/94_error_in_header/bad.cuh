#pragma once
__global__ void k() {}
inline void broken() { k<<<1, 1>>(); }
