// CUDA arrays, texture objects and surface objects (cudasim/textures.hpp): what they hold, and
// how a kernel thread reads them. Copies into and out of arrays are memory.cpp's (they are
// strided copies of device memory, laid out as array_layout() says).
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cudasim/narrow_float.hpp"
#include "cudasim/runtime_api.hpp"
#include "cudasim/textures.hpp"
#include "internal.hpp"

/// A CUDA array: device memory, texels in row-major order, rows of `width` texels, slices (or
/// layers) of `rows` rows.
struct cudaArray {
  cudaChannelFormatDesc desc;
  cudaExtent extent;      // as allocated (0 for a missing dimension)
  unsigned flags;
  std::size_t element_bytes;
  std::size_t width, rows, slices;  // texels, rows, slices or layers: at least 1 each
  char* data;
};

namespace cudasim::detail {
namespace {

// ---- texel formats --------------------------------------------------------------------------

struct TexelLayout {
  int channels = 0;
  int bits = 0;  // per channel
  cudaChannelFormatKind kind = cudaChannelFormatKindNone;
  std::size_t bytes() const { return static_cast<std::size_t>(channels) * bits / 8; }
};

/// The layout of a channel description, or why the simulator (or a GPU) refuses it.
const char* texel_layout(const cudaChannelFormatDesc& d, TexelLayout& layout) {
  const int bits[4] = {d.x, d.y, d.z, d.w};
  int channels = 0;
  while (channels < 4 && bits[channels] != 0) ++channels;
  for (int c = channels; c < 4; ++c)
    if (bits[c] != 0) return "a channel after an empty one";
  if (channels == 0) return "no channel";
  if (channels == 3) return "three channels (CUDA arrays and textures take 1, 2 or 4)";
  for (int c = 1; c < channels; ++c)
    if (bits[c] != bits[0]) return "channels of different sizes";
  if (bits[0] != 8 && bits[0] != 16 && bits[0] != 32) return "channels of a size other than 8, 16 or 32 bits";
  if (d.f == cudaChannelFormatKindFloat && bits[0] == 8) return "8-bit floats";
  if (d.f != cudaChannelFormatKindSigned && d.f != cudaChannelFormatKindUnsigned && d.f != cudaChannelFormatKindFloat)
    return "a format kind other than signed, unsigned or float";
  layout = {channels, bits[0], d.f};
  return nullptr;
}

/// Channel `c` of the texel at `texel` as a float: the value itself for floats, scaled to
/// [0, 1] or [-1, 1] for integers read as normalised floats.
float channel_as_float(const unsigned char* texel, const TexelLayout& f, int c) {
  const unsigned char* p = texel + static_cast<std::size_t>(c) * f.bits / 8;
  switch (f.kind) {
    case cudaChannelFormatKindFloat:
      if (f.bits == 16) {
        std::uint16_t h;
        cudasim::detail::raw_memcpy(&h, p, 2);
        return narrow_to_float<Binary16>(h);
      } else {
        float v;
        cudasim::detail::raw_memcpy(&v, p, 4);
        return v;
      }
    case cudaChannelFormatKindUnsigned:
      if (f.bits == 8) return *p / 255.0f;
      if (f.bits == 16) {
        std::uint16_t v;
        cudasim::detail::raw_memcpy(&v, p, 2);
        return v / 65535.0f;
      }
      break;
    case cudaChannelFormatKindSigned:
      if (f.bits == 8) return std::max(static_cast<signed char>(*p) / 127.0f, -1.0f);
      if (f.bits == 16) {
        std::int16_t v;
        cudasim::detail::raw_memcpy(&v, p, 2);
        return std::max(v / 32767.0f, -1.0f);
      }
      break;
    default: break;
  }
  return 0.0f;  // refused when the texture was made (32-bit integers read as floats)
}

// ---- arrays ----------------------------------------------------------------------------------

std::mutex arrays_mutex;
std::map<const cudaArray*, std::unique_ptr<cudaArray>> arrays;

cudaArray* find_array(const cudaArray* array) {
  std::lock_guard<std::mutex> lock(arrays_mutex);
  const auto found = arrays.find(array);
  return found == arrays.end() ? nullptr : found->second.get();
}

cudaError_t make_array(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned flags,
                       const char* api, const char* file, unsigned line) {
  if (array == nullptr || desc == nullptr) return record_error(cudaErrorInvalidValue);
  TexelLayout f;
  if (const char* why = texel_layout(*desc, f)) {
    report("%s: the channel format has %s", api, why);
    return record_error(cudaErrorInvalidChannelDescriptor);
  }
  if ((flags & cudaArrayTextureGather) != 0) {
    report("%s: texture-gather arrays are not simulated", api);
    return record_error(cudaErrorNotSupported);
  }
  const bool layered = (flags & cudaArrayLayered) != 0;
  if ((flags & cudaArrayCubemap) != 0 &&
      (extent.width == 0 || extent.height != extent.width || extent.depth == 0 || extent.depth % 6 != 0 ||
       (!layered && extent.depth != 6))) {
    report("%s: a cubemap is six square faces (an extent of W x W x 6, or W x W x 6N with cudaArrayLayered), not "
           "%zu x %zu x %zu texels", api, extent.width, extent.height, extent.depth);
    return record_error(cudaErrorInvalidValue);
  }
  if (extent.width == 0 || (extent.height == 0 && extent.depth != 0 && !layered) || (layered && extent.depth == 0)) {
    report("%s: an extent of %zu x %zu x %zu texels is not a 1-D, 2-D, 3-D or layered array", api, extent.width,
           extent.height, extent.depth);
    return record_error(cudaErrorInvalidValue);
  }
  auto made = std::make_unique<cudaArray>();
  made->desc = *desc;
  made->extent = extent;
  made->flags = flags;
  made->element_bytes = f.bytes();
  made->width = extent.width;
  made->rows = std::max<std::size_t>(extent.height, 1);
  made->slices = std::max<std::size_t>(extent.depth, 1);
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(made->width * made->element_bytes, made->rows, &bytes) ||
      __builtin_mul_overflow(bytes, made->slices, &bytes))
    return record_error(cudaErrorMemoryAllocation);
  made->data = static_cast<char*>(allocate_device_memory(bytes, file, line));
  if (made->data == nullptr) return record_error(cudaErrorMemoryAllocation);
  *array = made.get();
  std::lock_guard<std::mutex> lock(arrays_mutex);
  arrays[made.get()] = std::move(made);
  return cudaSuccess;
}

// ---- texture and surface objects ---------------------------------------------------------------

/// What a texture or surface object reads, and how.
struct Resource {
  cudaResourceDesc desc{};       // as given
  TexelLayout texel;
  const char* base = nullptr;
  std::size_t width = 1, height = 1, depth = 1, layers = 1;  // texels; layers of a layered array
  std::size_t pitch = 0, slice = 0;  // bytes between rows, between slices (and layers)
  int dimensions = 1;                // 1, 2 or 3 (of a layer)
  bool layered = false;
  bool cubemap = false;              // six faces per layer, read by direction (texCubemap)
  bool linear = false;               // linear memory: tex1Dfetch
};

struct Texture {
  Resource resource;
  cudaTextureDesc desc{};
  bool returns_floats = false;  // float texels, or integers read as normalised floats
};

/// Objects are small integers that index a table, as CUDA's handles are (0 is never one). A
/// destroyed object's entry is emptied and its description kept, never freed, so that a kernel
/// still running with it reads a description, not freed memory.
template <class T>
class ObjectTable {
 public:
  unsigned long long add(std::unique_ptr<T> object) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].load(std::memory_order_relaxed) != nullptr) continue;
      slots_[i].store(object.get(), std::memory_order_release);
      kept_.push_back(std::move(object));
      return i + 1;
    }
    return 0;
  }
  const T* find(unsigned long long handle) const {
    if (handle == 0 || handle > slots_.size()) return nullptr;
    return slots_[handle - 1].load(std::memory_order_acquire);
  }
  bool remove(unsigned long long handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (handle == 0 || handle > slots_.size()) return false;
    return slots_[handle - 1].exchange(nullptr) != nullptr;
  }

 private:
  std::mutex mutex_;
  std::array<std::atomic<const T*>, 65536> slots_{};
  std::vector<std::unique_ptr<T>> kept_;
};

ObjectTable<Texture>& textures() {
  static auto* table = new ObjectTable<Texture>;
  return *table;
}

ObjectTable<Resource>& surfaces() {
  static auto* table = new ObjectTable<Resource>;
  return *table;
}

/// What `desc` describes, or why it cannot be read (the error, with a message reported).
cudaError_t resolve(const cudaResourceDesc& desc, const char* api, Resource& r) {
  r.desc = desc;
  switch (desc.resType) {
    case cudaResourceTypeArray: {
      const cudaArray* a = find_array(desc.res.array.array);
      if (a == nullptr) {
        report("%s: the resource's array is not a live CUDA array", api);
        return cudaErrorInvalidResourceHandle;
      }
      texel_layout(a->desc, r.texel);
      r.base = a->data;
      // A cubemap is read as a layered 2-D array of its faces once a direction has chosen one.
      r.cubemap = (a->flags & cudaArrayCubemap) != 0;
      r.layered = (a->flags & cudaArrayLayered) != 0 || r.cubemap;
      r.width = a->width;
      r.height = a->rows;
      r.pitch = a->width * a->element_bytes;
      r.slice = r.pitch * a->rows;
      if (r.layered) {
        r.layers = a->slices;
        r.dimensions = a->extent.height == 0 ? 1 : 2;
      } else {
        r.depth = a->slices;
        r.dimensions = a->extent.depth != 0 ? 3 : a->extent.height != 0 ? 2 : 1;
      }
      return cudaSuccess;
    }
    case cudaResourceTypeLinear:
    case cudaResourceTypePitch2D: {
      const bool linear = desc.resType == cudaResourceTypeLinear;
      const cudaChannelFormatDesc& format = linear ? desc.res.linear.desc : desc.res.pitch2D.desc;
      void* pointer = linear ? desc.res.linear.devPtr : desc.res.pitch2D.devPtr;
      if (const char* why = texel_layout(format, r.texel)) {
        report("%s: the channel format has %s", api, why);
        return cudaErrorInvalidChannelDescriptor;
      }
      const std::size_t texel = r.texel.bytes();
      r.base = static_cast<const char*>(pointer);
      r.linear = linear;
      r.dimensions = linear ? 1 : 2;
      if (linear) {
        r.width = desc.res.linear.sizeInBytes / texel;
        r.pitch = desc.res.linear.sizeInBytes;
      } else {
        r.width = desc.res.pitch2D.width;
        r.height = desc.res.pitch2D.height;
        r.pitch = desc.res.pitch2D.pitchInBytes;
        if (r.pitch % 32 != 0 || r.width * texel > r.pitch) {
          report("%s: a pitch of %zu bytes for rows of %zu texels of %zu bytes: the pitch must hold a row and be a "
                 "multiple of 32 bytes (cudaMallocPitch gives such pitches)", api, r.pitch, r.width, texel);
          return cudaErrorInvalidValue;
        }
      }
      r.slice = r.pitch * r.height;
      std::size_t span = r.slice;
      AllocationInfo info;
      if (r.width == 0 || r.height == 0 || reinterpret_cast<std::uintptr_t>(pointer) % texel != 0 ||
          !find_live_allocation(pointer, info) ||
          reinterpret_cast<std::uintptr_t>(pointer) - info.begin + span > info.size) {
        report("%s: the resource's %zu bytes at %p are not inside one live cudaMalloc allocation, aligned to "
               "a texel", api, span, pointer);
        return cudaErrorInvalidValue;
      }
      return cudaSuccess;
    }
    case cudaResourceTypeMipmappedArray:
      report("%s: mipmapped arrays are not simulated", api);
      return cudaErrorNotSupported;
  }
  report("%s: %d is not a cudaResourceType", api, static_cast<int>(desc.resType));
  return cudaErrorInvalidValue;
}

// ---- reading texels ------------------------------------------------------------------------------

/// Where index `i` of a dimension of `size` texels lands under `mode`; -1 for the border.
long long address(long long i, long long size, cudaTextureAddressMode mode, bool normalized) {
  if (i >= 0 && i < size) return i;
  // Wrap and mirror repeat the resource only for normalised coordinates, as on a GPU.
  if (normalized && mode == cudaAddressModeWrap) return ((i % size) + size) % size;
  if (normalized && mode == cudaAddressModeMirror) {
    const long long m = ((i % (2 * size)) + 2 * size) % (2 * size);
    return m < size ? m : 2 * size - 1 - m;
  }
  if (mode == cudaAddressModeBorder) return -1;
  return i < 0 ? 0 : size - 1;
}

/// floor(v) as an index, bounded so that any float (and NaN, which lands on 0) converts.
long long floor_index(float v) {
  const double f = std::floor(static_cast<double>(v));
  if (!(f > -1e15)) return f < 0 ? -1000000000000000LL : 0;
  return static_cast<long long>(std::min(f, 1e15));
}

/// The texel at (i, j, k) of `layer` (each already addressed; -1: the border) as raw bytes into
/// `out`, counted as the calling thread's load at `pc`.
void read_texel(const Resource& r, long long i, long long j, long long k, long long layer, unsigned char* out,
                const void* pc) {
  const std::size_t bytes = r.texel.bytes();
  if (i < 0 || j < 0 || k < 0) {
    cudasim::detail::raw_memset(out, 0, bytes);
    return;
  }
  const char* at = r.base + static_cast<std::size_t>(layer) * r.slice * r.depth + static_cast<std::size_t>(k) * r.slice +
                   static_cast<std::size_t>(j) * r.pitch + static_cast<std::size_t>(i) * bytes;
  count_device_access(at, static_cast<unsigned>(bytes), false, pc);
  raw_memcpy(out, at, bytes);
}

/// Where direction (x, y, z) meets a cubemap: the face (0 to 5: +x, -x, +y, -y, +z, -z) of the
/// component of largest magnitude, and the position on that face in [0, 1]², as the Programming
/// Guide's table "Cubemap Fetch" gives them.
struct CubemapHit {
  int face;
  float u, v;
};
CubemapHit cubemap_hit(float x, float y, float z) {
  const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  int face;
  float m, s, t;
  if (ax >= ay && ax >= az) {
    face = x >= 0.0f ? 0 : 1;
    m = ax, s = x >= 0.0f ? -z : z, t = -y;
  } else if (ay >= az) {
    face = y >= 0.0f ? 2 : 3;
    m = ay, s = x, t = y >= 0.0f ? z : -z;
  } else {
    face = z >= 0.0f ? 4 : 5;
    m = az, s = z >= 0.0f ? x : -x, t = -y;
  }
  if (!(m > 0.0f)) return {face, 0.5f, 0.5f};  // the zero vector (or NaN) points nowhere: the face's centre
  return {face, (s / m + 1.0f) * 0.5f, (t / m + 1.0f) * 0.5f};
}

/// The weight of the texel above in linear filtering: the fraction of the position, held in
/// fixed point with 8 bits of fraction, as the texture unit holds it.
float blend_weight(float fraction) { return std::nearbyint(fraction * 256.0f) / 256.0f; }

}  // namespace

// ---- what memory.cpp's array copies need --------------------------------------------------------

bool array_layout(const cudaArray* array, ArrayLayout& layout) {
  const cudaArray* a = find_array(array);
  if (a == nullptr) return false;
  layout.data = a->data;
  layout.element_bytes = a->element_bytes;
  layout.row_bytes = a->width * a->element_bytes;
  layout.rows = a->rows;
  layout.slices = a->slices;
  return true;
}

// ---- in kernels ------------------------------------------------------------------------------------

void texture_fetch(cudaTextureObject_t object, const TexturePoint& point, void* out) {
  const void* pc = __builtin_return_address(0);
  const Texture* t = textures().find(object);
  if (t == nullptr)
    throw KernelFault{cudaErrorIllegalAddress,
                      format_string("a texture fetch with texture object %llu, which is not a live texture object "
                                    "(never created, or destroyed)", object)};
  const Resource& r = t->resource;
  if (point.cubemap && !r.cubemap)
    throw KernelFault{cudaErrorIllegalAddress,
                      format_string("texCubemap with texture object %llu, whose array is not a cubemap (allocate it "
                                    "with cudaArrayCubemap)", object)};
  const long long sizes[3] = {static_cast<long long>(r.width), static_cast<long long>(r.height),
                              static_cast<long long>(r.depth)};
  bool normalized = t->desc.normalizedCoords != 0;
  const int dims = r.dimensions;
  cudaTextureAddressMode modes[3] = {t->desc.addressMode[0], t->desc.addressMode[1], t->desc.addressMode[2]};
  float position[3] = {point.x, point.y, point.z};
  long long wanted_layer = point.layer;
  if (point.cubemap) {
    // The direction picks a face; the position on it is normalised, and filtering stops at the
    // face's edges (no seamless filtering across faces, which creating the texture refused).
    const CubemapHit hit = cubemap_hit(point.x, point.y, point.z);
    position[0] = hit.u, position[1] = hit.v, position[2] = 0.0f;
    wanted_layer = 6LL * std::max(point.layer, 0) + hit.face;
    normalized = true;
    modes[0] = modes[1] = cudaAddressModeClamp;
  }
  const long long layer = r.layered ? std::clamp<long long>(wanted_layer, 0, static_cast<long long>(r.layers) - 1) : 0;
  unsigned char texel[16] = {};
  float result[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  cudasim::detail::raw_memset(out, 0, 16);

  if (point.by_index) {  // tex1Dfetch: no filtering, nothing outside
    const long long i = point.index;
    if (i >= 0 && i < sizes[0]) read_texel(r, i, 0, 0, layer, texel, pc);
    if (!t->returns_floats) {
      cudasim::detail::raw_memcpy(out, texel, r.texel.bytes());
      return;
    }
    for (int c = 0; c < r.texel.channels; ++c) result[c] = channel_as_float(texel, r.texel, c);
    cudasim::detail::raw_memcpy(out, result, sizeof result);
    return;
  }

  for (int d = 0; d < dims; ++d)
    if (normalized) position[d] *= static_cast<float>(sizes[d]);
  const bool linear = t->desc.filterMode == cudaFilterModeLinear;
  long long base[3] = {0, 0, 0};
  float weight[3] = {0.0f, 0.0f, 0.0f};
  for (int d = 0; d < dims; ++d) {
    if (linear) {
      const float below = position[d] - 0.5f;
      base[d] = floor_index(below);
      weight[d] = blend_weight(below - static_cast<float>(base[d]));
    } else {
      base[d] = floor_index(position[d]);
    }
  }
  const auto at = [&](int d, long long offset) {
    return d < dims ? address(base[d] + offset, sizes[d], modes[d], normalized) : 0;
  };
  if (!linear) {
    read_texel(r, at(0, 0), at(1, 0), at(2, 0), layer, texel, pc);
    const bool border = at(0, 0) < 0 || at(1, 0) < 0 || at(2, 0) < 0;
    if (!t->returns_floats) {
      cudasim::detail::raw_memcpy(out, texel, r.texel.bytes());
      return;
    }
    for (int c = 0; c < r.texel.channels; ++c)
      result[c] = border ? t->desc.borderColor[c] : channel_as_float(texel, r.texel, c);
    cudasim::detail::raw_memcpy(out, result, sizeof result);
    return;
  }
  // Linear: the 2, 4 or 8 texels around the position, blended dimension by dimension.
  const int corners = 1 << dims;
  for (int corner = 0; corner < corners; ++corner) {
    float w = 1.0f;
    long long index[3] = {0, 0, 0};
    bool border = false;
    for (int d = 0; d < dims; ++d) {
      const int upper = (corner >> d) & 1;
      w *= upper ? weight[d] : 1.0f - weight[d];
      index[d] = at(d, upper);
      border = border || index[d] < 0;
    }
    read_texel(r, index[0], index[1], index[2], layer, texel, pc);
    for (int c = 0; c < r.texel.channels; ++c)
      result[c] += w * (border ? t->desc.borderColor[c] : channel_as_float(texel, r.texel, c));
  }
  cudasim::detail::raw_memcpy(out, result, sizeof result);
}

void surface_access(cudaSurfaceObject_t object, int dimensions, int x, int y, int z, void* data, unsigned bytes,
                    bool store, cudaSurfaceBoundaryMode mode) {
  const void* pc = __builtin_return_address(0);
  const Resource* r = surfaces().find(object);
  if (r == nullptr)
    throw KernelFault{cudaErrorIllegalAddress,
                      format_string("a surface %s with surface object %llu, which is not a live surface object",
                                    store ? "write" : "read", object)};
  const std::size_t texel = r->texel.bytes();
  if (bytes != texel || x % static_cast<int>(texel) != 0)
    throw KernelFault{cudaErrorMisalignedAddress,
                      format_string("a surface %s of %u bytes at byte %d: the surface's texels are %zu bytes, and "
                                    "x counts bytes (a multiple of the texel's size)", store ? "write" : "read",
                                    bytes, x, texel)};
  long long position[3] = {x / static_cast<long long>(texel), y, z};
  const long long sizes[3] = {static_cast<long long>(r->width), static_cast<long long>(r->height),
                              static_cast<long long>(r->layered ? r->layers : r->depth)};
  for (int d = 0; d < 3; ++d) {
    const long long size = d < dimensions ? sizes[d] : 1;
    if (d >= dimensions) position[d] = 0;
    if (position[d] >= 0 && position[d] < size) continue;
    if (mode == cudaBoundaryModeClamp) {
      position[d] = std::clamp<long long>(position[d], 0, size - 1);
    } else if (mode == cudaBoundaryModeZero) {
      if (!store) cudasim::detail::raw_memset(data, 0, bytes);
      return;
    } else {
      throw KernelFault{cudaErrorIllegalAddress,
                        format_string("a surface %s at (%d, %d, %d) outside the surface's %lld x %lld x %lld texels "
                                      "(x counts bytes; cudaBoundaryModeTrap)", store ? "write" : "read", x, y, z,
                                      sizes[0], sizes[1], sizes[2])};
    }
  }
  char* at = const_cast<char*>(r->base) + static_cast<std::size_t>(position[2]) * r->slice +
             static_cast<std::size_t>(position[1]) * r->pitch + static_cast<std::size_t>(position[0]) * texel;
  count_device_access(at, bytes, store, pc);
  if (store)
    raw_memcpy(at, data, bytes);
  else
    raw_memcpy(data, at, bytes);
}

}  // namespace cudasim::detail

using namespace cudasim::detail;

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height,
                            unsigned int flags, const char* file, unsigned line) {
  return make_array(array, desc, make_cudaExtent(width, height, 0), flags, "cudaMallocArray", file, line);
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned int flags, const char* file, unsigned line) {
  return make_array(array, desc, extent, flags, "cudaMalloc3DArray", file, line);
}

cudaError_t cudaFreeArray(cudaArray_t array) {
  if (array == nullptr) return cudaSuccess;
  std::unique_ptr<cudaArray> gone;
  {
    std::lock_guard<std::mutex> lock(arrays_mutex);
    const auto found = arrays.find(array);
    if (found == arrays.end()) {
      report("cudaFreeArray(%p): not a live CUDA array", static_cast<void*>(array));
      return record_error(cudaErrorInvalidValue);
    }
    gone = std::move(found->second);
    arrays.erase(found);
  }
  return cudaFree(gone->data);
}

cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags, cudaArray_t array) {
  const cudaArray* a = find_array(array);
  if (a == nullptr) return record_error(cudaErrorInvalidResourceHandle);
  if (desc) *desc = a->desc;
  if (extent) *extent = a->extent;
  if (flags) *flags = a->flags;
  return cudaSuccess;
}

cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
  const cudaArray* a = find_array(array);
  if (a == nullptr || desc == nullptr) return record_error(a == nullptr ? cudaErrorInvalidResourceHandle
                                                                        : cudaErrorInvalidValue);
  *desc = a->desc;
  return cudaSuccess;
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* object, const cudaResourceDesc* resource,
                                    const cudaTextureDesc* texture, const cudaResourceViewDesc* view) {
  const char* api = "cudaCreateTextureObject";
  if (object == nullptr || resource == nullptr || texture == nullptr) return record_error(cudaErrorInvalidValue);
  if (view != nullptr) {
    report("%s: resource views are not simulated (pass a null view)", api);
    return record_error(cudaErrorNotSupported);
  }
  auto t = std::make_unique<Texture>();
  const cudaError_t resolved = resolve(*resource, api, t->resource);
  if (resolved != cudaSuccess) return record_error(resolved);
  t->desc = *texture;
  const TexelLayout& f = t->resource.texel;
  if (texture->sRGB != 0) {
    report("%s: sRGB textures are not simulated", api);
    return record_error(cudaErrorNotSupported);
  }
  const bool integers = f.kind != cudaChannelFormatKindFloat;
  if (texture->readMode == cudaReadModeNormalizedFloat && integers && f.bits == 32) {
    report("%s: 32-bit integer texels cannot be read as normalised floats", api);
    return record_error(cudaErrorInvalidNormSetting);
  }
  t->returns_floats = !integers || texture->readMode == cudaReadModeNormalizedFloat;
  if (texture->filterMode == cudaFilterModeLinear && !t->returns_floats) {
    report("%s: linear filtering needs float texels, or integers read as normalised floats "
           "(cudaReadModeNormalizedFloat)", api);
    return record_error(cudaErrorInvalidFilterSetting);
  }
  if (texture->seamlessCubemap != 0 && texture->filterMode == cudaFilterModeLinear && t->resource.cubemap) {
    report("%s: seamless filtering across a cubemap's faces is not simulated (seamlessCubemap = 0 filters "
           "within each face)", api);
    return record_error(cudaErrorNotSupported);
  }
  if (texture->filterMode == cudaFilterModeLinear && t->resource.linear) {
    report("%s: a texture over linear memory is read with tex1Dfetch, without filtering", api);
    return record_error(cudaErrorInvalidFilterSetting);
  }
  const unsigned long long handle = textures().add(std::move(t));
  if (handle == 0) return record_error(cudaErrorMemoryAllocation);
  *object = handle;
  return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t object) {
  if (object == 0) return cudaSuccess;
  return textures().remove(object) ? cudaSuccess : record_error(cudaErrorInvalidValue);
}

cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resource, cudaTextureObject_t object) {
  const Texture* t = textures().find(object);
  if (t == nullptr || resource == nullptr) return record_error(cudaErrorInvalidValue);
  *resource = t->resource.desc;
  return cudaSuccess;
}

cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* texture, cudaTextureObject_t object) {
  const Texture* t = textures().find(object);
  if (t == nullptr || texture == nullptr) return record_error(cudaErrorInvalidValue);
  *texture = t->desc;
  return cudaSuccess;
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* object, const cudaResourceDesc* resource) {
  const char* api = "cudaCreateSurfaceObject";
  if (object == nullptr || resource == nullptr) return record_error(cudaErrorInvalidValue);
  if (resource->resType != cudaResourceTypeArray) {
    report("%s: a surface reads and writes a CUDA array (cudaResourceTypeArray)", api);
    return record_error(cudaErrorInvalidValue);
  }
  auto r = std::make_unique<Resource>();
  const cudaError_t resolved = resolve(*resource, api, *r);
  if (resolved != cudaSuccess) return record_error(resolved);
  // An array allocated without cudaArraySurfaceLoadStore is accepted too, as CUDA 13 accepts it
  // on an H200 (measured 2026-11-27), although the programming guide asks for the flag.
  const unsigned long long handle = surfaces().add(std::move(r));
  if (handle == 0) return record_error(cudaErrorMemoryAllocation);
  *object = handle;
  return cudaSuccess;
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t object) {
  if (object == 0) return cudaSuccess;
  return surfaces().remove(object) ? cudaSuccess : record_error(cudaErrorInvalidValue);
}

cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* resource, cudaSurfaceObject_t object) {
  const Resource* r = surfaces().find(object);
  if (r == nullptr || resource == nullptr) return record_error(cudaErrorInvalidValue);
  *resource = r->desc;
  return cudaSuccess;
}
