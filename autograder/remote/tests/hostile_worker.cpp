// A worker that breaks the protocol in the way HOSTILE_MODE names, for test_judge_survives.cpp:
// the judge must fail the running test with a clear message and go on with the next one.
// Honest until the first contract call (so the judge can set a test up), then:
//   honest        answers remote_probe(x) with x + 1
//   segv          dies of SIGSEGV
//   exit0         exits with code 0 in the middle of the call
//   huge          announces a 1 TiB reply
//   short         announces 100 bytes, sends 10, exits
//   bad_status    answers with a status the protocol does not have
//   bad_exception answers with an exception of an unknown kind
//   silent_child  leaves a child holding the channel open, and exits
//   long_reply    answers with more bytes than the result has
//   ahead         answers the call, then sends a reply to a request the judge has not made
#define COURSE_REMOTE_WORKER 1
#include "course_remote.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void send_all(const void* data, std::size_t size) {
  if (!course::remote::write_fully(3, data, size)) std::_Exit(3);
}

std::uint64_t g_nonce = 0;  // the nonce of the request being answered

void reply(std::uint32_t status, const std::string& payload, std::uint64_t announced) {
  const course::remote::ReplyHeader header{status, g_nonce, announced};
  send_all(&header, sizeof header);
  send_all(payload.data(), payload.size());
}

bool read_all(void* data, std::size_t size) { return course::remote::read_fully(3, data, size); }

}  // namespace

int main() {
  const char* env = std::getenv("HOSTILE_MODE");
  const std::string mode = env ? env : "honest";
  for (;;) {
    course::remote::RequestHeader request{};
    if (!read_all(&request, sizeof request)) return 0;
    const std::uint32_t op = request.op;
    const std::uint64_t size = request.size;
    g_nonce = request.nonce;
    std::string payload(size, '\0');
    if (!read_all(&payload[0], size)) return 0;
    course::remote::Reader in(payload);
    course::remote::Writer out;
    if (static_cast<course::remote::Op>(op) != course::remote::Op::call) {
      // Runtime requests: "success" and a zero for whatever they return.
      out.put<std::int32_t>(0);
      if (static_cast<course::remote::Op>(op) == course::remote::Op::malloc_device) out.put<std::uint64_t>(4096);
      reply(0, out.bytes(), out.bytes().size());
      continue;
    }
    in.get_string();
    const int x = in.get<int>();
    if (mode == "segv") ::raise(SIGSEGV);
    if (mode == "exit0") std::_Exit(0);
    if (mode == "huge") reply(0, "", std::uint64_t(1) << 40);
    if (mode == "short") {
      reply(0, std::string(10, 'x'), 100);
      return 0;
    }
    if (mode == "bad_status") reply(7, "", 0);
    if (mode == "ahead") {
      // A reply to the call, then one to a request not sent yet (which it cannot know).
      out.put<int>(x + 1);
      reply(0, out.bytes(), out.bytes().size());
      const std::string empty;
      g_nonce ^= 1;
      reply(0, empty, 0);
      continue;
    }
    if (mode == "bad_exception") {
      out.put<std::uint32_t>(999);
      out.put<std::int32_t>(0);
      out.put_string("?");
      reply(1, out.bytes(), out.bytes().size());
      continue;
    }
    if (mode == "silent_child") {
      if (::fork() == 0) {
        ::sleep(600);
        return 0;
      }
      return 0;
    }
    out.put<int>(x + 1);
    if (mode == "long_reply") out.put<int>(0);
    reply(0, out.bytes(), out.bytes().size());
  }
}
