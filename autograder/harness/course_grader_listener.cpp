// The grader's witness inside a test program: writes the signed result file that
// `./course grade` scores, instead of anything the program prints.
//
// Linked into every test binary that the grader builds (CMake option COURSE_GRADER, set only
// by ./course grade; see autograder/cmake/CourseGrader.cmake). Outside the grader it does
// nothing: no COURSE_GRADER_FD in the environment, no file.
//
// The protocol (docs/instructor-guide.md, "Why a submission cannot forge its results"):
//   1. the grader draws a fresh random 32-byte key and a result path per run, writes
//      "<key hex>\n<result path>\n" into a pipe and passes only the pipe's read end to the
//      child, naming it in COURSE_GRADER_FD;
//   2. before any of the submission's static initializers run (constructor priority 101; the
//      grader rejects submissions whose objects carry prioritised or pre-init constructors),
//      read_grader_secret() reads the pipe, closes it and removes COURSE_GRADER_FD;
//   3. at the end of the test program, the listener writes one line per test and the perf
//      figures, followed by "hmac <HMAC-SHA256(key, body)>", to the result path;
//   4. the grader accepts the file only if the HMAC verifies and every expected test is in
//      it (the expected list comes from the reference build, not from this program).
// A program that exits early (exit(0) in a launcher), crashes or hangs leaves no file and
// scores 0; one that prints "[  PASSED  ]" changes nothing.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "course_perf.hpp"

namespace {

// ---- SHA-256 and HMAC (FIPS 180-4, RFC 2104); small and dependency-free ---------------------
struct Sha256 {
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char block[64];
  std::size_t used = 0;
  std::uint64_t length = 0;

  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress(const unsigned char* p) {
    static const std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (std::uint32_t(p[4 * i]) << 24) | (std::uint32_t(p[4 * i + 1]) << 16) |
             (std::uint32_t(p[4 * i + 2]) << 8) | std::uint32_t(p[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }

  void update(const void* data, std::size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    length += n;
    while (n > 0) {
      const std::size_t take = std::min<std::size_t>(64 - used, n);
      std::memcpy(block + used, p, take);
      used += take; p += take; n -= take;
      if (used == 64) { compress(block); used = 0; }
    }
  }

  void finish(unsigned char out[32]) {
    const std::uint64_t bits = length * 8;
    const unsigned char pad = 0x80, zero = 0;
    update(&pad, 1);
    while (used != 56) update(&zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(len, 8);
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<unsigned char>(h[i] >> (24 - 8 * j));
  }
};

std::string hmac_sha256_hex(const std::vector<unsigned char>& key, const std::string& message) {
  unsigned char k[64] = {0};
  if (key.size() > 64) {
    Sha256 s; s.update(key.data(), key.size()); s.finish(k);
  } else {
    std::memcpy(k, key.data(), key.size());
  }
  unsigned char ipad[64], opad[64], inner[32], outer[32];
  for (int i = 0; i < 64; ++i) { ipad[i] = k[i] ^ 0x36; opad[i] = k[i] ^ 0x5c; }
  Sha256 a; a.update(ipad, 64); a.update(message.data(), message.size()); a.finish(inner);
  Sha256 b; b.update(opad, 64); b.update(inner, 32); b.finish(outer);
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : outer) { hex += digits[c >> 4]; hex += digits[c & 15]; }
  return hex;
}

// ---- the secret, read before the submission's own initializers ------------------------------
// Plain data only: constant-initialised, so no later dynamic initialisation (which runs after
// a priority-101 constructor) resets them.
unsigned char g_key[32];
char g_result_path[4096];
bool g_active = false;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

__attribute__((constructor(101))) void read_grader_secret() {
  const char* fd_text = std::getenv("COURSE_GRADER_FD");
  if (!fd_text) return;
  const int fd = std::atoi(fd_text);
  std::string secret;
  char buffer[512];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got <= 0) break;
    secret.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  ::unsetenv("COURSE_GRADER_FD");
  const std::size_t newline = secret.find('\n');
  if (newline == std::string::npos) return;
  const std::string key_hex = secret.substr(0, newline);
  std::string path = secret.substr(newline + 1);
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  if (key_hex.size() != 64 || path.empty() || path.size() >= sizeof g_result_path) return;
  for (std::size_t i = 0; i < key_hex.size(); i += 2) {
    const int hi = hex_value(key_hex[i]), lo = hex_value(key_hex[i + 1]);
    if (hi < 0 || lo < 0) return;
    g_key[i / 2] = static_cast<unsigned char>(hi * 16 + lo);
  }
  std::memset(&secret[0], 0, secret.size());  // one copy fewer of the key in memory
  std::memcpy(g_result_path, path.c_str(), path.size() + 1);
  g_active = true;
}

std::string escape_name(std::string s) {
  for (char& c : s)
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') c = '_';
  return s;
}

class SignedResultWriter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestProgramEnd(const ::testing::UnitTest& unit) override {
    if (!g_active) return;
    std::string body = "course-grader-result 1\n";
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
      const ::testing::TestSuite* suite = unit.GetTestSuite(i);
      for (int j = 0; j < suite->total_test_count(); ++j) {
        const ::testing::TestInfo* info = suite->GetTestInfo(j);
        if (!info->should_run()) continue;
        const ::testing::TestResult* result = info->result();
        const char* status = result->Skipped() ? "skipped" : result->Passed() ? "passed" : "failed";
        body += "test " + escape_name(std::string(suite->name()) + "." + info->name()) + " " + status + "\n";
      }
    }
    body += course::perf::signed_lines();
    body += "end\n";
    const std::string signature = hmac_sha256_hex(std::vector<unsigned char>(g_key, g_key + sizeof g_key), body);
    // O_EXCL: a file planted at the path beforehand makes the write fail, and the run scores 0.
    const int fd = ::open(g_result_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return;
    const std::string text = body + "hmac " + signature + "\n";
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      const ssize_t wrote = ::write(fd, p, left);
      if (wrote <= 0) break;
      p += wrote;
      left -= static_cast<std::size_t>(wrote);
    }
    ::close(fd);
  }
};

// Default priority: after read_grader_secret(), like any gtest registration.
const bool g_registered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new SignedResultWriter);
  return true;
}();

}  // namespace
