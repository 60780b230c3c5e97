/// @file textures.hpp
/// @brief CUDA arrays, texture objects and surface objects, as the simulator runs them.
///
/// A CUDA array is device memory (counted and bounds-checked as any other) in a plain row-major
/// layout: the simulator has no tiled texture layout to model. A texture object reads an array
/// or linear memory through the texture unit's rules, which these follow as the CUDA C++
/// Programming Guide's appendix "Texture Fetching" states them:
/// - coordinates are unnormalised (texels) or normalised ([0, 1) across the resource);
/// - point filtering takes the texel floor(x); linear filtering blends the two (2-D: four,
///   3-D: eight) texels around x - 0.5, with the blend weight held as the hardware holds it, in
///   fixed point with 8 bits of fraction;
/// - outside the resource, clamp repeats the edge texel and border gives the border colour;
///   wrap and mirror repeat the resource, for normalised coordinates only (for unnormalised
///   ones they act as clamp, as on a GPU);
/// - 8- and 16-bit integer texels read in cudaReadModeNormalizedFloat come back as floats in
///   [0, 1] (unsigned) or [-1, 1] (signed); 16-bit floats come back as floats.
/// Every texel a fetch reads is counted as a global load of the calling thread, at the fetch's
/// code address: a texture fetch is a read of global memory through the texture cache. Mipmaps,
/// A cubemap is six square faces (a layered array of 6, or 6N with cudaArrayLayered); texCubemap
/// picks the face of a direction's largest component, as the guide's table "Cubemap Fetch" does,
/// and filters within that face. Mipmaps, seamless cubemap filtering, gathers, sRGB and resource
/// views are not simulated (creating one is refused with a message); the legacy texture references were removed from CUDA 12 and are absent here too.
#pragma once

#include "cudasim/builtin_memory.hpp"

#include <cstddef>
#include <cstring>

#include "cudasim/runtime_types.hpp"

// ---- channel formats ----------------------------------------------------------------------

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f);

namespace cudasim::detail {
/// The channel format of a texel type: its channels' count and each channel's type.
template <class T>
struct TexelFormat;
#define CUDASIM_TEXEL_FORMAT(scalar, name, kind)                                                     \
  template <> struct TexelFormat<scalar> { static constexpr int channels = 1, bits = 8 * sizeof(scalar); \
                                           static constexpr cudaChannelFormatKind f = kind; };        \
  template <> struct TexelFormat<name##1> : TexelFormat<scalar> {};                                   \
  template <> struct TexelFormat<name##2> { static constexpr int channels = 2, bits = 8 * sizeof(scalar); \
                                            static constexpr cudaChannelFormatKind f = kind; };       \
  template <> struct TexelFormat<name##4> { static constexpr int channels = 4, bits = 8 * sizeof(scalar); \
                                            static constexpr cudaChannelFormatKind f = kind; };
CUDASIM_TEXEL_FORMAT(signed char, char, cudaChannelFormatKindSigned)
CUDASIM_TEXEL_FORMAT(unsigned char, uchar, cudaChannelFormatKindUnsigned)
CUDASIM_TEXEL_FORMAT(short, short, cudaChannelFormatKindSigned)
CUDASIM_TEXEL_FORMAT(unsigned short, ushort, cudaChannelFormatKindUnsigned)
CUDASIM_TEXEL_FORMAT(int, int, cudaChannelFormatKindSigned)
CUDASIM_TEXEL_FORMAT(unsigned int, uint, cudaChannelFormatKindUnsigned)
CUDASIM_TEXEL_FORMAT(float, float, cudaChannelFormatKindFloat)
#undef CUDASIM_TEXEL_FORMAT
template <> struct TexelFormat<char> : TexelFormat<signed char> {};
}  // namespace cudasim::detail

/// The channel format of `T` (float, uchar4, short2, ...), as CUDA's template gives it.
template <class T>
cudaChannelFormatDesc cudaCreateChannelDesc() {
  using F = cudasim::detail::TexelFormat<T>;
  const int b = F::bits;
  return cudaCreateChannelDesc(b, F::channels > 1 ? b : 0, F::channels > 2 ? b : 0, F::channels > 3 ? b : 0, F::f);
}

// ---- CUDA arrays ----------------------------------------------------------------------------

/// A 1-D (height 0) or 2-D array of `width` x `height` texels of `desc`'s format, in device
/// memory. Three-channel formats are refused, as on a GPU.
cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height = 0,
                            unsigned int flags = cudaArrayDefault, const char* file = __builtin_FILE(),
                            unsigned line = __builtin_LINE());
/// A 1-D, 2-D or 3-D array (`extent` in texels; 0 for a missing dimension), or with
/// cudaArrayLayered `extent.depth` layers of a 1-D (height 0) or 2-D array.
cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned int flags = cudaArrayDefault, const char* file = __builtin_FILE(),
                              unsigned line = __builtin_LINE());
cudaError_t cudaFreeArray(cudaArray_t array);
/// The array's format, extent (as it was allocated) and flags.
cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags, cudaArray_t array);
cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array);

/// `height` rows of `width` bytes into the array, from its byte `w_offset` of row `h_offset`.
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                     size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,
                                     cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                  size_t width, size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                                       size_t h_offset, size_t width, size_t height, cudaMemcpyKind kind,
                                       cudaStream_t stream = nullptr);
/// `count` bytes into the array from byte `w_offset` of row `h_offset` on, row after row (CUDA
/// has deprecated these two, and programs still use them).
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t count,
                              cudaMemcpyKind kind);
cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t w_offset, size_t h_offset, size_t count,
                                cudaMemcpyKind kind);

// ---- texture and surface objects --------------------------------------------------------------

/// A texture object reading `resource` as `texture` says. `view` must be null (resource views
/// are not simulated). Refused, with a message, for what a GPU refuses (linear filtering of
/// integer texels read as integers, normalised reads of 32-bit texels, a pitch not a multiple
/// of 32 bytes) and for what the simulator does not simulate (mipmaps, cubemaps, sRGB).
cudaError_t cudaCreateTextureObject(cudaTextureObject_t* object, const cudaResourceDesc* resource,
                                    const cudaTextureDesc* texture, const cudaResourceViewDesc* view);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t object);
cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resource, cudaTextureObject_t object);
cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* texture, cudaTextureObject_t object);
/// A surface object over an array allocated with cudaArraySurfaceLoadStore.
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* object, const cudaResourceDesc* resource);
cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t object);
cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* resource, cudaSurfaceObject_t object);

// ---- in kernels ---------------------------------------------------------------------------------

namespace cudasim::detail {
/// Where a texture is read: by an integer index (tex1Dfetch) or at coordinates of `dimensions`
/// (1, 2 or 3) in layer `layer` (-1: not layered), or (cubemap) in the direction (x, y, z).
struct TexturePoint {
  int dimensions;
  float x, y, z;
  int layer;
  int index;
  bool by_index;
  bool cubemap = false;
};
/// Reads texture `object` at `point` into `texel` (16 bytes): the texel itself where the texture
/// returns its element type, else four floats. Counts each texel read as a global load of the
/// calling thread (at its caller's code address); an invalid object fails the launch.
void texture_fetch(cudaTextureObject_t object, const TexturePoint& point, void* texel);
/// Reads or writes `bytes` at byte `x` of row `y` of slice or layer `z` of surface `object`.
void surface_access(cudaSurfaceObject_t object, int dimensions, int x, int y, int z, void* data, unsigned bytes,
                    bool store, cudaSurfaceBoundaryMode mode);

template <class T>
T fetch(cudaTextureObject_t object, const TexturePoint& point) {
  static_assert(sizeof(T) <= 16, "a texel is at most 16 bytes");
  alignas(16) unsigned char texel[16];
  texture_fetch(object, point, texel);
  T value;
  ::cudasim::detail::uncounted_memcpy(static_cast<void*>(&value), texel, sizeof(T));
  return value;
}
}  // namespace cudasim::detail

/// Texel `x` of a texture over linear memory: no filtering, 0 outside.
template <class T>
T tex1Dfetch(cudaTextureObject_t t, int x) {
  return cudasim::detail::fetch<T>(t, {1, 0.0f, 0.0f, 0.0f, -1, x, true});
}
template <class T>
T tex1D(cudaTextureObject_t t, float x) {
  return cudasim::detail::fetch<T>(t, {1, x, 0.0f, 0.0f, -1, 0, false});
}
template <class T>
T tex2D(cudaTextureObject_t t, float x, float y) {
  return cudasim::detail::fetch<T>(t, {2, x, y, 0.0f, -1, 0, false});
}
template <class T>
T tex3D(cudaTextureObject_t t, float x, float y, float z) {
  return cudasim::detail::fetch<T>(t, {3, x, y, z, -1, 0, false});
}
template <class T>
T tex1DLayered(cudaTextureObject_t t, float x, int layer) {
  return cudasim::detail::fetch<T>(t, {1, x, 0.0f, 0.0f, layer, 0, false});
}
template <class T>
T tex2DLayered(cudaTextureObject_t t, float x, float y, int layer) {
  return cudasim::detail::fetch<T>(t, {2, x, y, 0.0f, layer, 0, false});
}
/// The texel of a cubemap (of cubemap `layer` of a layered one) in the direction (x, y, z).
template <class T>
T texCubemap(cudaTextureObject_t t, float x, float y, float z) {
  return cudasim::detail::fetch<T>(t, {2, x, y, z, 0, 0, false, true});
}
template <class T>
T texCubemapLayered(cudaTextureObject_t t, float x, float y, float z, int layer) {
  return cudasim::detail::fetch<T>(t, {2, x, y, z, layer, 0, false, true});
}
/// Level-of-detail reads: without mipmaps every level is level 0.
template <class T>
T tex1DLod(cudaTextureObject_t t, float x, float) {
  return tex1D<T>(t, x);
}
template <class T>
T tex2DLod(cudaTextureObject_t t, float x, float y, float) {
  return tex2D<T>(t, x, y);
}
template <class T>
T tex3DLod(cudaTextureObject_t t, float x, float y, float z, float) {
  return tex3D<T>(t, x, y, z);
}
template <class T>
T texCubemapLod(cudaTextureObject_t t, float x, float y, float z, float) {
  return texCubemap<T>(t, x, y, z);
}
// The forms that write through a pointer.
template <class T>
void tex1Dfetch(T* value, cudaTextureObject_t t, int x) { *value = tex1Dfetch<T>(t, x); }
template <class T>
void tex1D(T* value, cudaTextureObject_t t, float x) { *value = tex1D<T>(t, x); }
template <class T>
void tex2D(T* value, cudaTextureObject_t t, float x, float y) { *value = tex2D<T>(t, x, y); }
template <class T>
void tex3D(T* value, cudaTextureObject_t t, float x, float y, float z) { *value = tex3D<T>(t, x, y, z); }
template <class T>
void tex1DLayered(T* value, cudaTextureObject_t t, float x, int layer) { *value = tex1DLayered<T>(t, x, layer); }
template <class T>
void tex2DLayered(T* value, cudaTextureObject_t t, float x, float y, int layer) {
  *value = tex2DLayered<T>(t, x, y, layer);
}

template <class T>
void texCubemap(T* value, cudaTextureObject_t t, float x, float y, float z) { *value = texCubemap<T>(t, x, y, z); }
template <class T>
void texCubemapLayered(T* value, cudaTextureObject_t t, float x, float y, float z, int layer) {
  *value = texCubemapLayered<T>(t, x, y, z, layer);
}

/// Surfaces: `x` counts bytes, as in CUDA; outside the array `mode` decides.
template <class T>
T surf1Dread(cudaSurfaceObject_t s, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  T value;
  cudasim::detail::surface_access(s, 1, x, 0, 0, &value, sizeof(T), false, mode);
  return value;
}
template <class T>
T surf2Dread(cudaSurfaceObject_t s, int x, int y, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  T value;
  cudasim::detail::surface_access(s, 2, x, y, 0, &value, sizeof(T), false, mode);
  return value;
}
template <class T>
T surf3Dread(cudaSurfaceObject_t s, int x, int y, int z, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  T value;
  cudasim::detail::surface_access(s, 3, x, y, z, &value, sizeof(T), false, mode);
  return value;
}
template <class T>
void surf1Dread(T* value, cudaSurfaceObject_t s, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  *value = surf1Dread<T>(s, x, mode);
}
template <class T>
void surf2Dread(T* value, cudaSurfaceObject_t s, int x, int y, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  *value = surf2Dread<T>(s, x, y, mode);
}
template <class T>
void surf3Dread(T* value, cudaSurfaceObject_t s, int x, int y, int z,
                cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  *value = surf3Dread<T>(s, x, y, z, mode);
}
template <class T>
void surf1Dwrite(T value, cudaSurfaceObject_t s, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  cudasim::detail::surface_access(s, 1, x, 0, 0, &value, sizeof(T), true, mode);
}
template <class T>
void surf2Dwrite(T value, cudaSurfaceObject_t s, int x, int y, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  cudasim::detail::surface_access(s, 2, x, y, 0, &value, sizeof(T), true, mode);
}
template <class T>
void surf3Dwrite(T value, cudaSurfaceObject_t s, int x, int y, int z,
                 cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  cudasim::detail::surface_access(s, 3, x, y, z, &value, sizeof(T), true, mode);
}
// Layered surfaces, and cubemaps as the layered arrays of their faces (face = 6 x layer + face
// number): the layer is the third coordinate.
template <class T>
T surf1DLayeredread(cudaSurfaceObject_t s, int x, int layer, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  return surf3Dread<T>(s, x, 0, layer, mode);
}
template <class T>
T surf2DLayeredread(cudaSurfaceObject_t s, int x, int y, int layer,
                    cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  return surf3Dread<T>(s, x, y, layer, mode);
}
template <class T>
T surfCubemapread(cudaSurfaceObject_t s, int x, int y, int face, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  return surf3Dread<T>(s, x, y, face, mode);
}
template <class T>
T surfCubemapLayeredread(cudaSurfaceObject_t s, int x, int y, int layer_face,
                         cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  return surf3Dread<T>(s, x, y, layer_face, mode);
}
template <class T>
void surf1DLayeredread(T* value, cudaSurfaceObject_t s, int x, int layer,
                       cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  *value = surf3Dread<T>(s, x, 0, layer, mode);
}
template <class T>
void surf2DLayeredread(T* value, cudaSurfaceObject_t s, int x, int y, int layer,
                       cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  *value = surf3Dread<T>(s, x, y, layer, mode);
}
template <class T>
void surfCubemapread(T* value, cudaSurfaceObject_t s, int x, int y, int face,
                     cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  *value = surf3Dread<T>(s, x, y, face, mode);
}
template <class T>
void surfCubemapLayeredread(T* value, cudaSurfaceObject_t s, int x, int y, int layer_face,
                            cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  *value = surf3Dread<T>(s, x, y, layer_face, mode);
}
template <class T>
void surf1DLayeredwrite(T value, cudaSurfaceObject_t s, int x, int layer,
                        cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  surf3Dwrite(value, s, x, 0, layer, mode);
}
template <class T>
void surf2DLayeredwrite(T value, cudaSurfaceObject_t s, int x, int y, int layer,
                        cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  surf3Dwrite(value, s, x, y, layer, mode);
}
template <class T>
void surfCubemapwrite(T value, cudaSurfaceObject_t s, int x, int y, int face,
                      cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  surf3Dwrite(value, s, x, y, face, mode);
}
template <class T>
void surfCubemapLayeredwrite(T value, cudaSurfaceObject_t s, int x, int y, int layer_face,
                             cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  surf3Dwrite(value, s, x, y, layer_face, mode);
}
