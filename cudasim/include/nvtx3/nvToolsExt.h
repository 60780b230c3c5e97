// cudasim's <nvtx3/nvToolsExt.h>: NVTX annotations (ranges and marks that a profiler such as
// Nsight Systems shows on its timeline). Without a profiler attached they do nothing, on a GPU
// as here; the simulator has none, so every call is accepted and does nothing. Only the common
// calls are declared: others are a compile error that names them.
#pragma once

#include <cstdint>

#define NVTX_VERSION 3

typedef struct nvtxDomainRegistration_st* nvtxDomainHandle_t;
typedef struct nvtxStringRegistration_st* nvtxStringHandle_t;
typedef std::uint64_t nvtxRangeId_t;

enum nvtxColorType_t { NVTX_COLOR_UNKNOWN = 0, NVTX_COLOR_ARGB = 1 };
enum nvtxMessageType_t {
  NVTX_MESSAGE_UNKNOWN = 0,
  NVTX_MESSAGE_TYPE_ASCII = 1,
  NVTX_MESSAGE_TYPE_UNICODE = 2,
  NVTX_MESSAGE_TYPE_REGISTERED = 3,
};
enum nvtxPayloadType_t { NVTX_PAYLOAD_UNKNOWN = 0 };

union nvtxMessageValue_t {
  const char* ascii;
  const wchar_t* unicode;
  nvtxStringHandle_t registered;
};

/// What nvtxRangePushEx and nvtxMarkEx take; the fields are those of NVTX version 3.
struct nvtxEventAttributes_t {
  std::uint16_t version;
  std::uint16_t size;
  std::uint32_t category;
  std::int32_t colorType;
  std::uint32_t color;
  std::int32_t payloadType;
  std::int32_t reserved0;
  union {
    std::uint64_t ullValue;
    std::int64_t llValue;
    double dValue;
    std::uint32_t uiValue;
    std::int32_t iValue;
    float fValue;
  } payload;
  std::int32_t messageType;
  nvtxMessageValue_t message;
};
#define NVTX_EVENT_ATTRIB_STRUCT_SIZE ((std::uint16_t)(sizeof(nvtxEventAttributes_t)))

inline int nvtxRangePushA(const char*) { return 0; }
inline int nvtxRangePushW(const wchar_t*) { return 0; }
inline int nvtxRangePushEx(const nvtxEventAttributes_t*) { return 0; }
inline int nvtxRangePop() { return 0; }
inline nvtxRangeId_t nvtxRangeStartA(const char*) { return 0; }
inline nvtxRangeId_t nvtxRangeStartW(const wchar_t*) { return 0; }
inline nvtxRangeId_t nvtxRangeStartEx(const nvtxEventAttributes_t*) { return 0; }
inline void nvtxRangeEnd(nvtxRangeId_t) {}
inline void nvtxMarkA(const char*) {}
inline void nvtxMarkW(const wchar_t*) {}
inline void nvtxMarkEx(const nvtxEventAttributes_t*) {}
inline void nvtxNameOsThreadA(std::uint32_t, const char*) {}
inline void nvtxNameCategoryA(std::uint32_t, const char*) {}
inline nvtxDomainHandle_t nvtxDomainCreateA(const char*) { return nullptr; }
inline void nvtxDomainDestroy(nvtxDomainHandle_t) {}
inline int nvtxDomainRangePushEx(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { return 0; }
inline int nvtxDomainRangePop(nvtxDomainHandle_t) { return 0; }
inline void nvtxDomainMarkEx(nvtxDomainHandle_t, const nvtxEventAttributes_t*) {}

// The names without A or W, as NVTX defines them (the A forms: UNICODE is not defined here).
#define nvtxRangePush nvtxRangePushA
#define nvtxRangeStart nvtxRangeStartA
#define nvtxMark nvtxMarkA
#define nvtxNameOsThread nvtxNameOsThreadA
#define nvtxNameCategory nvtxNameCategoryA
#define nvtxDomainCreate nvtxDomainCreateA
