/// @file record_format.hpp
/// @brief The lesson's data set on disk: files of fixed-size records with a checksum each,
/// and the (given) code that writes them, checks them and reads a range of samples.
///
/// Used by exercise 04/02 `prefetch_ring`, its tests, and `loader_benchmark.cu`. Header-only
/// and plain C++ (no CUDA), so it reads like any data-set reader.
///
/// A file is a 16-byte header followed by `record_count` records:
///
/// | bytes | header field | meaning |
/// |---|---|---|
/// | 4 | magic | `D L R 1` |
/// | 4 | record_count | records in this file (little-endian uint32) |
/// | 4 | features | bytes of pixels per record, the same in every file |
/// | 4 | reserved | 0 |
///
/// | bytes | record field | meaning |
/// |---|---|---|
/// | 8 | sample_id | the sample's position in the whole data set (files in order), uint64 |
/// | features | pixels | raw 8-bit values, as an image decoder would produce |
/// | 4 | checksum | FNV-1a (32 bit) over the 8 id bytes and the pixels |
///
/// "Preprocessing" turns each pixel into a float in [-1, 1]: `(p - 127.5) / 127.5`. The pixels
/// of the synthetic data set are a fixed function of (sample_id, position), so a test can
/// recompute what every sample must contain.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dataset {

/// The header's size and the per-record overhead (id + checksum), in bytes.
constexpr std::size_t kHeaderBytes = 16;
constexpr std::size_t kRecordOverhead = 8 + 4;

/// Bytes of one record with `features` pixels.
inline std::size_t record_bytes(std::uint32_t features) { return kRecordOverhead + features; }

/// A file of the data set is missing, malformed, truncated, or a record fails its checksum.
/// `what()` names the file and, where there is one, the record (0-based within the file).
class DataError : public std::runtime_error {
 public:
  DataError(std::string file, long long record, const std::string& why)
      : std::runtime_error(file + (record >= 0 ? ": record " + std::to_string(record) : std::string()) +
                           ": " + why),
        file_(std::move(file)), record_(record) {}
  /// The file's path as given.
  const std::string& file() const { return file_; }
  /// The record's index within the file, or -1 for a problem with the file as a whole.
  long long record() const { return record_; }

 private:
  std::string file_;
  long long record_;
};

/// The synthetic pixel at position `j` of sample `id` (a cheap hash: writing a large data
/// set must not be the slow part).
inline std::uint8_t pixel_value(std::uint64_t id, std::uint32_t j) {
  std::uint32_t x = static_cast<std::uint32_t>(id) * 2654435761u ^ (j * 40503u + 0x9E37u);
  x ^= x >> 13;
  return static_cast<std::uint8_t>(x * 0x5bd1e995u >> 24);
}

/// Preprocessing of one pixel: an 8-bit value to a float in [-1, 1].
inline float normalize_pixel(std::uint8_t p) { return (static_cast<float>(p) - 127.5f) / 127.5f; }

/// FNV-1a over the 8 bytes of `id` (little-endian) and the pixels.
inline std::uint32_t record_checksum(std::uint64_t id, const std::uint8_t* pixels, std::uint32_t features) {
  std::uint32_t h = 2166136261u;
  for (int b = 0; b < 8; ++b) {
    h ^= static_cast<std::uint8_t>(id >> (8 * b));
    h *= 16777619u;
  }
  for (std::uint32_t j = 0; j < features; ++j) {
    h ^= pixels[j];
    h *= 16777619u;
  }
  return h;
}

namespace detail {
inline void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int b = 0; b < 4; ++b) p[b] = static_cast<std::uint8_t>(v >> (8 * b));
}
inline std::uint32_t get_u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}
inline std::uint64_t get_u64(const std::uint8_t* p) {
  return std::uint64_t(get_u32(p)) | std::uint64_t(get_u32(p + 4)) << 32;
}
/// Moves `f`, just opened, to byte `offset`. A file that cannot seek (a pipe, a socket: data
/// streamed from elsewhere) is read up to there instead. False when the stream ends first.
inline bool skip_to(std::FILE* f, std::size_t offset) {
  if (std::fseek(f, static_cast<long>(offset), SEEK_SET) == 0) return true;
  if (errno != ESPIPE) return false;
  std::uint8_t scratch[4096];
  while (offset > 0) {
    const std::size_t got = std::fread(scratch, 1, std::min(offset, sizeof scratch), f);
    if (got == 0) return false;
    offset -= got;
  }
  return true;
}
/// Closes a FILE* at the end of a scope.
struct FileCloser {
  std::FILE* f;
  ~FileCloser() {
    if (f) std::fclose(f);
  }
};
}  // namespace detail

/// Writes one file of `count` records for samples `first_id, first_id + 1, ...`.
/// @throws DataError if the file cannot be written
inline void write_file(const std::string& path, std::uint64_t first_id, std::uint32_t count,
                       std::uint32_t features) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw DataError(path, -1, std::string("cannot create: ") + std::strerror(errno));
  detail::FileCloser closer{f};
  std::uint8_t header[kHeaderBytes] = {'D', 'L', 'R', '1'};
  detail::put_u32(header + 4, count);
  detail::put_u32(header + 8, features);
  std::vector<std::uint8_t> record(record_bytes(features));
  bool ok = std::fwrite(header, 1, sizeof header, f) == sizeof header;
  for (std::uint32_t r = 0; ok && r < count; ++r) {
    const std::uint64_t id = first_id + r;
    for (int b = 0; b < 8; ++b) record[b] = static_cast<std::uint8_t>(id >> (8 * b));
    for (std::uint32_t j = 0; j < features; ++j) record[8 + j] = pixel_value(id, j);
    detail::put_u32(record.data() + 8 + features, record_checksum(id, record.data() + 8, features));
    ok = std::fwrite(record.data(), 1, record.size(), f) == record.size();
  }
  if (!ok) throw DataError(path, -1, "write failed");
}

/// One file of the data set, as its header describes it.
struct FileInfo {
  std::string path;
  std::uint32_t records = 0;
  std::int64_t first_sample = 0;  ///< global index of its first record
};

/// The data set: its files in order, the pixels per record, the number of samples.
struct Index {
  std::vector<FileInfo> files;
  std::uint32_t features = 0;
  std::int64_t samples = 0;
};

/// Reads the header of every file (not the records: a truncated or corrupt record is found
/// when it is read).
/// @throws DataError for a missing file, a wrong magic, or files with different `features`
inline Index scan(const std::vector<std::string>& paths) {
  Index index;
  for (const std::string& path : paths) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw DataError(path, -1, std::string("cannot open: ") + std::strerror(errno));
    detail::FileCloser closer{f};
    std::uint8_t header[kHeaderBytes];
    if (std::fread(header, 1, sizeof header, f) != sizeof header)
      throw DataError(path, -1, "shorter than its 16-byte header");
    if (std::memcmp(header, "DLR1", 4) != 0) throw DataError(path, -1, "not a DLR1 file (bad magic)");
    const std::uint32_t features = detail::get_u32(header + 8);
    if (features == 0) throw DataError(path, -1, "header says 0 features per record");
    if (!index.files.empty() && features != index.features)
      throw DataError(path, -1, "has " + std::to_string(features) + " features per record, the first file " +
                                    std::to_string(index.features));
    index.features = features;
    index.files.push_back({path, detail::get_u32(header + 4), index.samples});
    index.samples += index.files.back().records;
  }
  return index;
}

/// Reads samples `[first, first + count)` of the data set (they may span several files),
/// checks each record (complete, checksum, sample id), and writes the preprocessed pixels to
/// `features_out` (`count * index.features` floats, sample after sample) and the ids to
/// `ids_out` (`count` values). Each call opens the files it needs: it is safe to call from
/// several threads at once. A file that cannot seek (a named pipe that streams the file) is
/// read from its start.
/// @throws DataError naming the file and the record for a truncated file, a checksum
///         mismatch or a record whose id is not its position in the data set
inline void read_samples(const Index& index, std::int64_t first, int count, float* features_out,
                         std::int64_t* ids_out) {
  if (first < 0 || count < 0 || first + count > index.samples)
    throw std::out_of_range("read_samples: samples [" + std::to_string(first) + ", " +
                            std::to_string(first + count) + ") outside the data set of " +
                            std::to_string(index.samples));
  if (count == 0) return;
  const std::size_t rb = record_bytes(index.features);
  std::vector<std::uint8_t> buffer;
  // The file holding `first`: the last one whose first sample is <= first.
  auto file = std::upper_bound(index.files.begin(), index.files.end(), first,
                               [](std::int64_t s, const FileInfo& f) { return s < f.first_sample; }) - 1;
  int done = 0;
  while (done < count) {
    const std::int64_t sample = first + done;
    while (sample >= file->first_sample + file->records) ++file;  // skips empty files too
    const std::uint32_t record = static_cast<std::uint32_t>(sample - file->first_sample);
    const int run = static_cast<int>(std::min<std::int64_t>(count - done, file->records - record));
    std::FILE* f = std::fopen(file->path.c_str(), "rb");
    if (!f) throw DataError(file->path, -1, std::string("cannot open: ") + std::strerror(errno));
    detail::FileCloser closer{f};
    buffer.resize(rb * run);
    std::size_t got = 0;
    if (detail::skip_to(f, kHeaderBytes + rb * record)) got = std::fread(buffer.data(), 1, buffer.size(), f);
    for (int k = 0; k < run; ++k) {
      const long long r = static_cast<long long>(record) + k;
      if (got < rb * (k + 1))
        throw DataError(file->path, r, "truncated: the file ends inside this record (header promises " +
                                           std::to_string(file->records) + " records)");
      const std::uint8_t* rec = buffer.data() + rb * k;
      const std::uint64_t id = detail::get_u64(rec);
      const std::uint32_t stored = detail::get_u32(rec + 8 + index.features);
      const std::uint32_t computed = record_checksum(id, rec + 8, index.features);
      if (stored != computed) {
        char why[96];
        std::snprintf(why, sizeof why, "checksum mismatch (stored %08x, computed %08x)", stored, computed);
        throw DataError(file->path, r, why);
      }
      const std::int64_t expected_id = sample + k;
      if (id != static_cast<std::uint64_t>(expected_id))
        throw DataError(file->path, r, "holds sample " + std::to_string(id) + ", expected sample " +
                                           std::to_string(expected_id));
      float* out = features_out + static_cast<std::size_t>(done + k) * index.features;
      for (std::uint32_t j = 0; j < index.features; ++j) out[j] = normalize_pixel(rec[8 + j]);
      ids_out[done + k] = expected_id;
    }
    done += run;
  }
}

}  // namespace dataset
