// CUDA arrays, texture objects and surface objects: copies into and out of arrays, point and
// linear sampling with the texture unit's addressing rules, normalised reads of 8-bit texels,
// tex1Dfetch on linear memory, pitched, 3-D, layered and cubemap resources, surface reads and
// writes, and what is refused. Expected values come from the CUDA C++ Programming Guide's formulas (appendix
// "Texture Fetching"), with positions whose blend weights are exact in the hardware's 8-bit
// fixed point. Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

std::vector<float> ramp(int n, float scale) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 37) % 101) - 7.0f;
  return v;
}

/// A texture over `resource` with every other setting as given.
cudaTextureObject_t make_texture(const cudaResourceDesc& resource, cudaTextureFilterMode filter,
                                 cudaTextureAddressMode mode, bool normalized,
                                 cudaTextureReadMode read = cudaReadModeElementType) {
  cudaTextureDesc t{};
  t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = mode;
  t.filterMode = filter;
  t.readMode = read;
  t.normalizedCoords = normalized ? 1 : 0;
  cudaTextureObject_t object = 0;
  EXPECT_EQ(cudaCreateTextureObject(&object, &resource, &t, nullptr), cudaSuccess);
  return object;
}

cudaResourceDesc array_resource(cudaArray_t array) {
  cudaResourceDesc r{};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = array;
  return r;
}

/// out[i] = tex2D at (xs[i], ys[i]).
__global__ void sample_2d(cudaTextureObject_t t, const float* xs, const float* ys, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]);
}

__global__ void sample_1d(cudaTextureObject_t t, const float* xs, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<float>(t, xs[i]);
}

/// Runs `sample_2d` at the given positions and returns what it read.
std::vector<float> sample(cudaTextureObject_t t, const std::vector<float>& xs, const std::vector<float>& ys) {
  const int n = static_cast<int>(xs.size());
  float *dx, *dy, *dout;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMalloc(&dout, n * sizeof(float));
  cudaMemcpy(dx, xs.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, ys.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  sample_2d<<<(n + 63) / 64, 64>>>(t, dx, dy, dout, n);
  std::vector<float> out(n, -1.0f);
  EXPECT_EQ(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dout);
  return out;
}

/// A W x H float array holding `data` (row-major).
cudaArray_t float_array(const std::vector<float>& data, int w, int h) {
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array = nullptr;
  EXPECT_EQ(cudaMallocArray(&array, &desc, w, h), cudaSuccess);
  EXPECT_EQ(cudaMemcpy2DToArray(array, 0, 0, data.data(), w * sizeof(float), w * sizeof(float), h,
                                cudaMemcpyHostToDevice),
            cudaSuccess);
  return array;
}

TEST(CudaArrays, CopiesInAndOutKeepEveryTexel) {
  const int w = 37, h = 11;
  const std::vector<float> data = ramp(w * h, 0.5f);
  cudaArray_t array = float_array(data, w, h);
  std::vector<float> back(w * h, 0.0f);
  ASSERT_CUDA(cudaMemcpy2DFromArray(back.data(), w * sizeof(float), array, 0, 0, w * sizeof(float), h,
                                    cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, data);
  // A block at an offset: rows 3-5, texels 4-9.
  std::vector<float> block(3 * 6, 0.0f);
  ASSERT_CUDA(cudaMemcpy2DFromArray(block.data(), 6 * sizeof(float), array, 4 * sizeof(float), 3, 6 * sizeof(float),
                                    3, cudaMemcpyDeviceToHost));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 6; ++c) EXPECT_EQ(block[r * 6 + c], data[(r + 3) * w + c + 4]);
  // The deprecated contiguous copies run on from row to row.
  std::vector<float> run(50, 0.0f);
  ASSERT_CUDA(cudaMemcpyFromArray(run.data(), array, 2 * sizeof(float), 1, run.size() * sizeof(float),
                                  cudaMemcpyDeviceToHost));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(run[i], data[w + 2 + i]);
  cudaChannelFormatDesc desc{};
  cudaExtent extent{};
  unsigned flags = 99;
  ASSERT_CUDA(cudaArrayGetInfo(&desc, &extent, &flags, array));
  EXPECT_EQ(desc.x, 32);
  EXPECT_EQ(desc.f, cudaChannelFormatKindFloat);
  EXPECT_EQ(extent.width, 37u);
  EXPECT_EQ(extent.height, 11u);
  EXPECT_EQ(flags, 0u);
  // A block that does not fit is refused.
  EXPECT_EQ(cudaMemcpy2DToArray(array, 0, 10, data.data(), w * sizeof(float), w * sizeof(float), 2,
                                cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_CUDA(cudaFreeArray(array));
}

TEST(Textures, PointSamplingReadsTheTexelUnderThePosition) {
  const int w = 13, h = 7;
  const std::vector<float> data = ramp(w * h, 1.0f);
  cudaArray_t array = float_array(data, w, h);
  cudaTextureObject_t clamp = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeClamp, false);
  cudaTextureObject_t border = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeBorder, false);
  std::vector<float> xs, ys;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      xs.push_back(x + 0.75f);  // anywhere inside texel (x, y)
      ys.push_back(y + 0.25f);
    }
  EXPECT_EQ(sample(clamp, xs, ys), data);
  // Outside: clamp repeats the edge, border reads the border colour (zero).
  const std::vector<float> outside_x = {-3.0f, 20.0f, 5.5f, 100.0f}, outside_y = {2.5f, 2.5f, -1.0f, 50.0f};
  const std::vector<float> clamped = sample(clamp, outside_x, outside_y);
  EXPECT_EQ(clamped, (std::vector<float>{data[2 * w], data[2 * w + w - 1], data[5], data[(h - 1) * w + w - 1]}));
  EXPECT_EQ(sample(border, outside_x, outside_y), (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}));
  ASSERT_CUDA(cudaDestroyTextureObject(clamp));
  ASSERT_CUDA(cudaDestroyTextureObject(border));
  ASSERT_CUDA(cudaFreeArray(array));
}

TEST(Textures, LinearFilteringBlendsTheNeighboursWithTheirWeights) {
  const int w = 9, h = 5;
  const std::vector<float> data = ramp(w * h, 0.25f);
  cudaArray_t array = float_array(data, w, h);
  cudaTextureObject_t t = make_texture(array_resource(array), cudaFilterModeLinear, cudaAddressModeClamp, false);
  // Positions x = i + 0.5 + a, y = j + 0.5 + b with a, b multiples of 1/256: exact weights. The
  // simulator blends exactly; a GPU's texture unit blends in lower precision (on an H200,
  // 2026-11-27, up to 0.71/256 of the four texels' range off), so the bound is one weight step.
  std::vector<float> xs, ys, expected, step;
  for (int j = 0; j + 1 < h; ++j)
    for (int i = 0; i + 1 < w; ++i) {
      const float a = static_cast<float>((i * 29 + j * 7) % 256) / 256.0f, b = static_cast<float>((i * 3 + j * 61) % 256) / 256.0f;
      xs.push_back(i + 0.5f + a);
      ys.push_back(j + 0.5f + b);
      const float top = (1 - a) * data[j * w + i] + a * data[j * w + i + 1];
      const float bottom = (1 - a) * data[(j + 1) * w + i] + a * data[(j + 1) * w + i + 1];
      expected.push_back((1 - b) * top + b * bottom);
      const float texels[] = {data[j * w + i], data[j * w + i + 1], data[(j + 1) * w + i], data[(j + 1) * w + i + 1]};
      step.push_back((*std::max_element(texels, texels + 4) - *std::min_element(texels, texels + 4)) / 256.0f);
    }
  const std::vector<float> got = sample(t, xs, ys);
#ifdef CUDASIM
  for (std::size_t k = 0; k < got.size(); ++k) step[k] = 0.0f;
#endif
  for (std::size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], expected[k], step[k] + 1e-5f * (1.0f + std::fabs(expected[k])))
        << "at " << xs[k] << ", " << ys[k];
  // At a texel's centre the filter gives the texel itself.
  EXPECT_EQ(sample(t, {3.5f}, {2.5f}), (std::vector<float>{data[2 * w + 3]}));
  ASSERT_CUDA(cudaDestroyTextureObject(t));
  ASSERT_CUDA(cudaFreeArray(array));
}

TEST(Textures, NormalisedCoordinatesWrapAndMirror) {
  const int w = 8;
  const std::vector<float> data = ramp(w, 1.0f);
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array = nullptr;
  ASSERT_CUDA(cudaMallocArray(&array, &desc, w));  // 1-D
  ASSERT_CUDA(cudaMemcpyToArray(array, 0, 0, data.data(), w * sizeof(float), cudaMemcpyHostToDevice));
  cudaTextureObject_t wrap = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeWrap, true);
  cudaTextureObject_t mirror = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeMirror, true);
  std::vector<float> xs;
  for (int i = 0; i < w; ++i) xs.push_back(1.0f + (i + 0.5f) / w);  // one period on
  float *dx, *dout;
  ASSERT_CUDA(cudaMalloc(&dx, w * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&dout, w * sizeof(float)));
  ASSERT_CUDA(cudaMemcpy(dx, xs.data(), w * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<float> got(w);
  sample_1d<<<1, w>>>(wrap, dx, dout, w);
  ASSERT_CUDA(cudaMemcpy(got.data(), dout, w * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, data) << "wrap repeats the texture";
  sample_1d<<<1, w>>>(mirror, dx, dout, w);
  ASSERT_CUDA(cudaMemcpy(got.data(), dout, w * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < w; ++i) EXPECT_EQ(got[i], data[w - 1 - i]) << "mirror reflects it, at " << i;
  cudaFree(dx);
  cudaFree(dout);
  ASSERT_CUDA(cudaDestroyTextureObject(wrap));
  ASSERT_CUDA(cudaDestroyTextureObject(mirror));
  ASSERT_CUDA(cudaFreeArray(array));
}

__global__ void read_rgba(cudaTextureObject_t normalized, cudaTextureObject_t raw, float4* floats, uchar4* bytes,
                          int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  floats[y * w + x] = tex2D<float4>(normalized, x + 0.5f, y + 0.5f);
  bytes[y * w + x] = tex2D<uchar4>(raw, x + 0.5f, y + 0.5f);
}

TEST(Textures, BytesReadAsNormalisedFloatsOrAsThemselves) {
  const int w = 6, h = 3;
  std::vector<uchar4> data(w * h);
  for (int i = 0; i < w * h; ++i)
    data[i] = make_uchar4(static_cast<unsigned char>(i * 13), static_cast<unsigned char>(255 - i),
                          static_cast<unsigned char>(i * 7 % 256), 255);
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<uchar4>();
  EXPECT_EQ(desc.x, 8);
  EXPECT_EQ(desc.w, 8);
  EXPECT_EQ(desc.f, cudaChannelFormatKindUnsigned);
  cudaArray_t array = nullptr;
  ASSERT_CUDA(cudaMallocArray(&array, &desc, w, h));
  ASSERT_CUDA(cudaMemcpy2DToArray(array, 0, 0, data.data(), w * sizeof(uchar4), w * sizeof(uchar4), h,
                                  cudaMemcpyHostToDevice));
  cudaTextureObject_t normalized = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeClamp,
                                                false, cudaReadModeNormalizedFloat);
  cudaTextureObject_t raw = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeClamp, false);
  float4* df;
  uchar4* db;
  ASSERT_CUDA(cudaMalloc(&df, w * h * sizeof(float4)));
  ASSERT_CUDA(cudaMalloc(&db, w * h * sizeof(uchar4)));
  read_rgba<<<dim3(1, h), w>>>(normalized, raw, df, db, w, h);
  std::vector<float4> floats(w * h);
  std::vector<uchar4> bytes(w * h);
  ASSERT_CUDA(cudaMemcpy(floats.data(), df, w * h * sizeof(float4), cudaMemcpyDeviceToHost));
  ASSERT_CUDA(cudaMemcpy(bytes.data(), db, w * h * sizeof(uchar4), cudaMemcpyDeviceToHost));
  for (int i = 0; i < w * h; ++i) {
    EXPECT_FLOAT_EQ(floats[i].x, data[i].x / 255.0f);
    EXPECT_FLOAT_EQ(floats[i].y, data[i].y / 255.0f);
    EXPECT_FLOAT_EQ(floats[i].z, data[i].z / 255.0f);
    EXPECT_FLOAT_EQ(floats[i].w, 1.0f);
    EXPECT_EQ(bytes[i].x, data[i].x);
    EXPECT_EQ(bytes[i].y, data[i].y);
    EXPECT_EQ(bytes[i].z, data[i].z);
  }
  cudaFree(df);
  cudaFree(db);
  ASSERT_CUDA(cudaDestroyTextureObject(normalized));
  ASSERT_CUDA(cudaDestroyTextureObject(raw));
  ASSERT_CUDA(cudaFreeArray(array));
}

__global__ void fetch_linear(cudaTextureObject_t t, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i - 2);  // two before the start, two past the end
}

TEST(Textures, Tex1DfetchReadsLinearMemoryAndZeroOutside) {
  const int n = 100;
  const std::vector<float> data = ramp(n, 3.0f);
  float *d, *out;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&out, (n + 4) * sizeof(float)));
  ASSERT_CUDA(cudaMemcpy(d, data.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaResourceDesc r{};
  r.resType = cudaResourceTypeLinear;
  r.res.linear.devPtr = d;
  r.res.linear.desc = cudaCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = n * sizeof(float);
  cudaTextureObject_t t = make_texture(r, cudaFilterModePoint, cudaAddressModeClamp, false);
  fetch_linear<<<1, n + 4>>>(t, out, n + 4);
  std::vector<float> got(n + 4);
  ASSERT_CUDA(cudaMemcpy(got.data(), out, (n + 4) * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n + 4; ++i) EXPECT_EQ(got[i], i >= 2 && i < n + 2 ? data[i - 2] : 0.0f) << "at " << i;
  cudaResourceDesc back{};
  ASSERT_CUDA(cudaGetTextureObjectResourceDesc(&back, t));
  EXPECT_EQ(back.resType, cudaResourceTypeLinear);
  EXPECT_EQ(back.res.linear.devPtr, d);
  ASSERT_CUDA(cudaDestroyTextureObject(t));
  cudaFree(d);
  cudaFree(out);
}

TEST(Textures, PitchedMemoryIsReadRowByRow) {
  const int w = 21, h = 6;
  const std::vector<float> data = ramp(w * h, 2.0f);
  float* d = nullptr;
  size_t pitch = 0;
  ASSERT_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&d), &pitch, w * sizeof(float), h));
  ASSERT_CUDA(cudaMemcpy2D(d, pitch, data.data(), w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
  cudaResourceDesc r{};
  r.resType = cudaResourceTypePitch2D;
  r.res.pitch2D.devPtr = d;
  r.res.pitch2D.desc = cudaCreateChannelDesc<float>();
  r.res.pitch2D.width = w;
  r.res.pitch2D.height = h;
  r.res.pitch2D.pitchInBytes = pitch;
  cudaTextureObject_t t = make_texture(r, cudaFilterModePoint, cudaAddressModeClamp, false);
  std::vector<float> xs, ys;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      xs.push_back(x + 0.5f);
      ys.push_back(y + 0.5f);
    }
  EXPECT_EQ(sample(t, xs, ys), data);
  ASSERT_CUDA(cudaDestroyTextureObject(t));
  cudaFree(d);
}

__global__ void read_volume(cudaTextureObject_t volume, cudaTextureObject_t layers, float* a, float* b, int w, int h,
                            int d) {
  const int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  if (x >= w || y >= h || z >= d) return;
  a[(z * h + y) * w + x] = tex3D<float>(volume, x + 0.5f, y + 0.5f, z + 0.5f);
  b[(z * h + y) * w + x] = tex2DLayered<float>(layers, x + 0.5f, y + 0.5f, z);
}

TEST(Textures, VolumesAndLayersAreCopiedAndReadBySlice) {
  const int w = 5, h = 4, d = 3;
  const std::vector<float> data = ramp(w * h * d, 1.5f);
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t volume = nullptr, layers = nullptr;
  ASSERT_CUDA(cudaMalloc3DArray(&volume, &desc, make_cudaExtent(w, h, d)));
  ASSERT_CUDA(cudaMalloc3DArray(&layers, &desc, make_cudaExtent(w, h, d), cudaArrayLayered));
  for (cudaArray_t array : {volume, layers}) {
    cudaMemcpy3DParms p{};
    p.srcPtr = make_cudaPitchedPtr(const_cast<float*>(data.data()), w * sizeof(float), w, h);
    p.dstArray = array;
    p.extent = make_cudaExtent(w, h, d);  // texels: an array takes part
    p.kind = cudaMemcpyHostToDevice;
    ASSERT_CUDA(cudaMemcpy3D(&p));
  }
  cudaTextureObject_t tv = make_texture(array_resource(volume), cudaFilterModePoint, cudaAddressModeClamp, false);
  cudaTextureObject_t tl = make_texture(array_resource(layers), cudaFilterModePoint, cudaAddressModeClamp, false);
  float *da, *db;
  ASSERT_CUDA(cudaMalloc(&da, data.size() * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&db, data.size() * sizeof(float)));
  read_volume<<<dim3(h, d), w>>>(tv, tl, da, db, w, h, d);
  std::vector<float> a(data.size()), b(data.size());
  ASSERT_CUDA(cudaMemcpy(a.data(), da, a.size() * sizeof(float), cudaMemcpyDeviceToHost));
  ASSERT_CUDA(cudaMemcpy(b.data(), db, b.size() * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(a, data);
  EXPECT_EQ(b, data);
  // And back out of the volume, one slice of it.
  std::vector<float> slice(w * h, 0.0f);
  cudaMemcpy3DParms p{};
  p.srcArray = volume;
  p.srcPos = make_cudaPos(0, 0, 2);
  p.dstPtr = make_cudaPitchedPtr(slice.data(), w * sizeof(float), w, h);
  p.extent = make_cudaExtent(w, h, 1);
  p.kind = cudaMemcpyDeviceToHost;
  ASSERT_CUDA(cudaMemcpy3D(&p));
  EXPECT_EQ(slice, std::vector<float>(data.begin() + 2 * w * h, data.end()));
  cudaFree(da);
  cudaFree(db);
  ASSERT_CUDA(cudaDestroyTextureObject(tv));
  ASSERT_CUDA(cudaDestroyTextureObject(tl));
  ASSERT_CUDA(cudaFreeArray(volume));
  ASSERT_CUDA(cudaFreeArray(layers));
}

__global__ void brighten(cudaSurfaceObject_t s, int w, int h) {
  const int x = threadIdx.x, y = blockIdx.x;
  if (x >= w || y >= h) return;
  const float v = surf2Dread<float>(s, x * static_cast<int>(sizeof(float)), y);  // x counts bytes
  surf2Dwrite(2.0f * v + 1.0f, s, x * static_cast<int>(sizeof(float)), y);
}

TEST(Surfaces, KernelsReadAndWriteArraysThroughThem) {
  const int w = 10, h = 4;
  const std::vector<float> data = ramp(w * h, 1.0f);
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array = nullptr;
  ASSERT_CUDA(cudaMallocArray(&array, &desc, w, h, cudaArraySurfaceLoadStore));
  ASSERT_CUDA(cudaMemcpy2DToArray(array, 0, 0, data.data(), w * sizeof(float), w * sizeof(float), h,
                                  cudaMemcpyHostToDevice));
  cudaSurfaceObject_t s = 0;
  const cudaResourceDesc r = array_resource(array);
  ASSERT_CUDA(cudaCreateSurfaceObject(&s, &r));
  brighten<<<h, w>>>(s, w, h);
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<float> back(w * h);
  ASSERT_CUDA(cudaMemcpy2DFromArray(back.data(), w * sizeof(float), array, 0, 0, w * sizeof(float), h,
                                    cudaMemcpyDeviceToHost));
  for (int i = 0; i < w * h; ++i) EXPECT_EQ(back[i], 2.0f * data[i] + 1.0f);
  ASSERT_CUDA(cudaDestroySurfaceObject(s));
  ASSERT_CUDA(cudaFreeArray(array));
}

/// The direction through the centre of texel (x, y) of `face`, as NVIDIA's simpleCubemapTexture
/// sample writes the guide's table backwards: u and v run from -1 to 1 across the face.
__device__ void face_direction(int face, int x, int y, int w, float& cx, float& cy, float& cz) {
  const float u = ((x + 0.5f) / w) * 2.0f - 1.0f, v = ((y + 0.5f) / w) * 2.0f - 1.0f;
  switch (face) {
    case 0: cx = 1.0f, cy = -v, cz = -u; break;
    case 1: cx = -1.0f, cy = -v, cz = u; break;
    case 2: cx = u, cy = 1.0f, cz = v; break;
    case 3: cx = u, cy = -1.0f, cz = -v; break;
    case 4: cx = u, cy = -v, cz = 1.0f; break;
    default: cx = -u, cy = -v, cz = -1.0f; break;
  }
}

/// out[((layer * 6 + face) * w + y) * w + x] = the cubemap's texel in the direction of that
/// texel's centre, through texCubemapLayered if `layered`; `scale` stretches the direction (its
/// length must not matter).
__global__ void read_cubemap(cudaTextureObject_t t, float* out, int w, int layers, bool layered, float scale) {
  const int x = threadIdx.x, y = blockIdx.x;
  for (int layer = 0; layer < layers; ++layer)
    for (int face = 0; face < 6; ++face) {
      float cx, cy, cz;
      face_direction(face, x, y, w, cx, cy, cz);
      const std::size_t at = ((static_cast<std::size_t>(layer) * 6 + face) * w + y) * w + x;
      out[at] = layered ? texCubemapLayered<float>(t, scale * cx, scale * cy, scale * cz, layer)
                        : texCubemap<float>(t, scale * cx, scale * cy, scale * cz);
    }
}

/// Fills every face of a cubemap through a surface: texel (x, y) of face f holds 1000 f + 10 y + x.
__global__ void paint_faces(cudaSurfaceObject_t s) {
  const int x = threadIdx.x, y = blockIdx.x;
  for (int face = 0; face < 6; ++face)
    surfCubemapwrite(1000.0f * face + 10.0f * y + x, s, x * static_cast<int>(sizeof(float)), y, face);
}

TEST(Textures, CubemapsPickTheFaceOfTheDirectionsLargestComponent) {
  const int w = 8, layers = 2;
  const std::vector<float> data = ramp(w * w * 6 * layers, 0.5f);
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t cube = nullptr, cubes = nullptr;
  ASSERT_CUDA(cudaMalloc3DArray(&cube, &desc, make_cudaExtent(w, w, 6), cudaArrayCubemap));
  ASSERT_CUDA(cudaMalloc3DArray(&cubes, &desc, make_cudaExtent(w, w, 6 * layers), cudaArrayCubemap | cudaArrayLayered));
  for (cudaArray_t array : {cube, cubes}) {
    cudaMemcpy3DParms p{};
    p.srcPtr = make_cudaPitchedPtr(const_cast<float*>(data.data()), w * sizeof(float), w, w);
    p.dstArray = array;
    p.extent = make_cudaExtent(w, w, array == cube ? 6 : 6 * layers);
    p.kind = cudaMemcpyHostToDevice;
    ASSERT_CUDA(cudaMemcpy3D(&p));
  }
  // Linear filtering at a texel's centre gives the texel itself, whatever the direction's length.
  cudaTextureObject_t t = make_texture(array_resource(cube), cudaFilterModeLinear, cudaAddressModeClamp, true);
  cudaTextureObject_t tl = make_texture(array_resource(cubes), cudaFilterModePoint, cudaAddressModeClamp, true);
  float* out = nullptr;
  ASSERT_CUDA(cudaMalloc(&out, data.size() * sizeof(float)));
  std::vector<float> got(w * w * 6);
  for (float scale : {1.0f, 3.5f}) {
    read_cubemap<<<w, w>>>(t, out, w, 1, false, scale);
    ASSERT_CUDA(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, std::vector<float>(data.begin(), data.begin() + w * w * 6)) << "scale " << scale;
  }
  std::vector<float> all(data.size());
  read_cubemap<<<w, w>>>(tl, out, w, layers, true, 1.0f);
  ASSERT_CUDA(cudaMemcpy(all.data(), out, all.size() * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(all, data);
  cudaFree(out);
  ASSERT_CUDA(cudaDestroyTextureObject(t));
  ASSERT_CUDA(cudaDestroyTextureObject(tl));
  ASSERT_CUDA(cudaFreeArray(cube));
  ASSERT_CUDA(cudaFreeArray(cubes));
}

TEST(Surfaces, CubemapFacesAreWrittenByFaceNumber) {
  const int w = 4;
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t cube = nullptr;
  ASSERT_CUDA(cudaMalloc3DArray(&cube, &desc, make_cudaExtent(w, w, 6), cudaArrayCubemap | cudaArraySurfaceLoadStore));
  cudaSurfaceObject_t s = 0;
  const cudaResourceDesc r = array_resource(cube);
  ASSERT_CUDA(cudaCreateSurfaceObject(&s, &r));
  paint_faces<<<w, w>>>(s);
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<float> back(w * w * 6);
  cudaMemcpy3DParms p{};
  p.srcArray = cube;
  p.dstPtr = make_cudaPitchedPtr(back.data(), w * sizeof(float), w, w);
  p.extent = make_cudaExtent(w, w, 6);
  p.kind = cudaMemcpyDeviceToHost;
  ASSERT_CUDA(cudaMemcpy3D(&p));
  for (int face = 0; face < 6; ++face)
    for (int y = 0; y < w; ++y)
      for (int x = 0; x < w; ++x) EXPECT_EQ(back[(face * w + y) * w + x], 1000.0f * face + 10.0f * y + x);
  ASSERT_CUDA(cudaDestroySurfaceObject(s));
  ASSERT_CUDA(cudaFreeArray(cube));
}

TEST(Textures, WhatAGpuRefusesIsRefused) {
  // Three channels.
  const cudaChannelFormatDesc three = cudaCreateChannelDesc(32, 32, 32, 0, cudaChannelFormatKindFloat);
  cudaArray_t array = nullptr;
  EXPECT_EQ(cudaMallocArray(&array, &three, 8, 8), cudaErrorInvalidChannelDescriptor);
  cudaGetLastError();
  // Linear filtering of integers read as integers; 32-bit integers read as normalised floats.
  const cudaChannelFormatDesc ints = cudaCreateChannelDesc<int>();
  ASSERT_CUDA(cudaMallocArray(&array, &ints, 8, 8));
  const cudaResourceDesc r = array_resource(array);
  cudaTextureDesc t{};
  t.filterMode = cudaFilterModeLinear;
  cudaTextureObject_t object = 0;
  EXPECT_EQ(cudaCreateTextureObject(&object, &r, &t, nullptr), cudaErrorInvalidFilterSetting);
  cudaGetLastError();
  t.filterMode = cudaFilterModePoint;
  t.readMode = cudaReadModeNormalizedFloat;
  EXPECT_EQ(cudaCreateTextureObject(&object, &r, &t, nullptr), cudaErrorInvalidNormSetting);
  cudaGetLastError();
  // Not refused: a surface over an array made without cudaArraySurfaceLoadStore (the
  // programming guide asks for the flag, but CUDA 13 on an H200 creates it, 2026-11-27).
  cudaSurfaceObject_t s = 0;
  EXPECT_EQ(cudaCreateSurfaceObject(&s, &r), cudaSuccess);
  EXPECT_EQ(cudaDestroySurfaceObject(s), cudaSuccess);
  ASSERT_CUDA(cudaFreeArray(array));
  // A cubemap's faces are square, and there are six of them (per layer).
  const cudaChannelFormatDesc floats = cudaCreateChannelDesc<float>();
  EXPECT_EQ(cudaMalloc3DArray(&array, &floats, make_cudaExtent(8, 4, 6), cudaArrayCubemap), cudaErrorInvalidValue);
  cudaGetLastError();
  EXPECT_EQ(cudaMalloc3DArray(&array, &floats, make_cudaExtent(8, 8, 5), cudaArrayCubemap), cudaErrorInvalidValue);
  cudaGetLastError();
  EXPECT_EQ(cudaMalloc3DArray(&array, &floats, make_cudaExtent(8, 8, 12), cudaArrayCubemap), cudaErrorInvalidValue);
  cudaGetLastError();
}

#ifdef CUDASIM

__global__ void fetch_every_texel(cudaTextureObject_t t, float* out, int w, int h) {
  const int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}

TEST(TexturesOnTheSimulator, EachTexelReadIsAGlobalLoad) {
  if (!cudasim::stats_available()) GTEST_SKIP() << "this build is not counted";
  const int w = 16, h = 8;
  cudaArray_t array = float_array(ramp(w * h, 1.0f), w, h);
  cudaTextureObject_t point = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeClamp, false);
  cudaTextureObject_t linear = make_texture(array_resource(array), cudaFilterModeLinear, cudaAddressModeClamp, false);
  float* out = nullptr;
  ASSERT_CUDA(cudaMalloc(&out, w * h * sizeof(float)));
  cudasim::reset_stats();
  fetch_every_texel<<<h, w>>>(point, out, w, h);
  ASSERT_CUDA(cudaDeviceSynchronize());
  cudasim::KernelStats k = cudasim::last_launch_stats();
  EXPECT_EQ(k.global_load_bytes, 4u * w * h) << "one 4-byte texel per fetch";
  EXPECT_EQ(k.global_store_bytes, 4u * w * h);
  cudasim::reset_stats();
  fetch_every_texel<<<h, w>>>(linear, out, w, h);
  ASSERT_CUDA(cudaDeviceSynchronize());
  k = cudasim::last_launch_stats();
  EXPECT_EQ(k.global_load_bytes, 4u * 4u * w * h) << "four texels per bilinear fetch";
  cudaFree(out);
  ASSERT_CUDA(cudaDestroyTextureObject(point));
  ASSERT_CUDA(cudaDestroyTextureObject(linear));
  ASSERT_CUDA(cudaFreeArray(array));
}

TEST(TexturesOnTheSimulator, ADestroyedTextureFailsTheLaunchWithAMessage) {
  cudaArray_t array = float_array(ramp(16, 1.0f), 4, 4);
  cudaTextureObject_t t = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeClamp, false);
  ASSERT_CUDA(cudaDestroyTextureObject(t));
  float* out = nullptr;
  ASSERT_CUDA(cudaMalloc(&out, 16 * sizeof(float)));
  testing::internal::CaptureStderr();
  fetch_every_texel<<<4, 4>>>(t, out, 4, 4);
  const cudaError_t error = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_NE(report.find("not a live texture object"), std::string::npos) << report;
  EXPECT_NE(report.find("fetch_every_texel"), std::string::npos) << report;
  ASSERT_CUDA(cudaDeviceReset());
  (void)array;
}

TEST(TexturesOnTheSimulator, TexCubemapOnAnArrayThatIsNotACubemapFailsTheLaunch) {
  cudaArray_t array = float_array(ramp(64, 1.0f), 8, 8);
  cudaTextureObject_t t = make_texture(array_resource(array), cudaFilterModePoint, cudaAddressModeClamp, true);
  float* out = nullptr;
  ASSERT_CUDA(cudaMalloc(&out, 6 * 64 * sizeof(float)));
  testing::internal::CaptureStderr();
  read_cubemap<<<8, 8>>>(t, out, 8, 1, false, 1.0f);
  const cudaError_t error = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_NE(report.find("not a cubemap"), std::string::npos) << report;
  EXPECT_NE(report.find("read_cubemap"), std::string::npos) << report;
  ASSERT_CUDA(cudaDeviceReset());
}

TEST(TexturesOnTheSimulator, SeamlessCubemapFilteringIsRefusedWithAMessage) {
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t cube = nullptr;
  ASSERT_CUDA(cudaMalloc3DArray(&cube, &desc, make_cudaExtent(4, 4, 6), cudaArrayCubemap));
  const cudaResourceDesc r = array_resource(cube);
  cudaTextureDesc t{};
  t.filterMode = cudaFilterModeLinear;
  t.normalizedCoords = 1;
  t.seamlessCubemap = 1;
  cudaTextureObject_t object = 0;
  testing::internal::CaptureStderr();
  EXPECT_EQ(cudaCreateTextureObject(&object, &r, &t, nullptr), cudaErrorNotSupported);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("seamless"), std::string::npos);
  cudaGetLastError();
  ASSERT_CUDA(cudaFreeArray(cube));
}

#endif  // CUDASIM

}  // namespace
