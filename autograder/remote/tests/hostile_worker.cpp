// A worker that breaks the protocol in the way HOSTILE_MODE names, for test_judge_survives.cpp:
// the judge must fail the running test with a clear message and go on with the next one.
// Honest until the first contract call (so the judge can set a test up). remote_call_back(f, x)
// calls f(x) back on the request's own lane, then f(x + 1) from a lane of its own (a thread of
// the submission), and passes on what f threw. Then, by mode:
//   honest         answers remote_probe(x) with x + 1
//   segv           dies of SIGSEGV
//   exit0          exits with code 0 in the middle of the call
//   huge           announces a 1 TiB reply
//   short          announces 100 bytes, sends 10, exits
//   bad_status     answers with a status the protocol does not have
//   bad_exception  answers with an exception of an unknown kind
//   silent_child   leaves a child holding the channel open, and exits
//   long_reply     answers with more bytes than the result has
//   ahead          answers the call, then sends a reply to a request the judge has not made
//   unknown_callback  calls back a function the test never passed
//   foreign_lane   answers on a lane the judge did not open
//   many_lanes     opens more lanes (threads calling back) than the judge serves (remote_call_back)
//   reply_on_own_lane  sends a reply on a lane it opens with it
//   judge_request  sends the judge a request it does not serve (not a callback)
#define COURSE_REMOTE_WORKER 1
#include "course_remote.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using course::remote::Header;
using course::remote::Kind;

void send_all(const void* data, std::size_t size) {
  if (!course::remote::write_fully(3, data, size)) std::_Exit(3);
}

void send(Kind kind, std::uint32_t code, std::uint64_t lane, std::uint64_t nonce, const std::string& payload,
          std::uint64_t announced) {
  const Header header{static_cast<std::uint32_t>(kind), code, lane, nonce, announced};
  send_all(&header, sizeof header);
  send_all(payload.data(), payload.size());
}

Header g_request{};  // the request being answered

void reply(std::uint32_t status, const std::string& payload, std::uint64_t announced) {
  send(Kind::reply, status, g_request.lane, g_request.nonce, payload, announced);
}

bool read_all(void* data, std::size_t size) { return course::remote::read_fully(3, data, size); }

/// A callback request on `lane` for callback `id`, with an int argument.
void call_back(std::uint64_t lane, std::uint64_t id, int argument) {
  course::remote::Writer out;
  out.put<std::uint64_t>(id);
  out.put<int>(argument);
  send(Kind::request, static_cast<std::uint32_t>(course::remote::Op::callback), lane, 1, out.bytes(), out.bytes().size());
}

}  // namespace

int main() {
  const char* env = std::getenv("HOSTILE_MODE");
  const std::string mode = env ? env : "honest";
  for (;;) {
    if (!read_all(&g_request, sizeof g_request)) return 0;
    const auto op = static_cast<course::remote::Op>(g_request.code);
    std::string payload(g_request.size, '\0');
    if (!read_all(&payload[0], g_request.size)) return 0;
    course::remote::Reader in(payload);
    course::remote::Writer out;
    if (op != course::remote::Op::call) {
      // Runtime requests: "success" and a zero for whatever they return.
      out.put<std::int32_t>(0);
      if (op == course::remote::Op::malloc_device) out.put<std::uint64_t>(4096);
      reply(0, out.bytes(), out.bytes().size());
      continue;
    }
    const std::string name = in.get_string();
    if (name == "remote_call_back") {
      const auto id = in.get<std::uint64_t>();
      const int x = in.get<int>();
      if (mode == "many_lanes") {
        for (std::uint64_t lane = 1; lane < 1000; lane += 2) call_back(lane, id, x);
      } else {
        for (std::uint64_t lane : {g_request.lane, std::uint64_t(1)}) {
          call_back(lane, id, lane == 1 ? x + 1 : x);
          Header answer{};
          if (!read_all(&answer, sizeof answer)) return 0;
          std::string results(answer.size, '\0');
          if (!read_all(&results[0], answer.size)) return 0;
          if (answer.kind != static_cast<std::uint32_t>(Kind::reply) || answer.lane != lane) return 4;
          if (answer.code != 0) {  // the test's function threw: so does the contract function
            reply(1, results, results.size());
            break;
          }
        }
      }
      reply(0, "", 0);
      continue;
    }
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
      g_request.nonce ^= 1;
      reply(0, "", 0);
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
    if (mode == "unknown_callback") call_back(g_request.lane, 12345, 0);
    if (mode == "foreign_lane") {
      g_request.lane += 1000;
      reply(0, "", 0);
    }
    if (mode == "reply_on_own_lane") send(Kind::reply, 0, 7, 1, "", 0);
    if (mode == "judge_request") send(Kind::request, static_cast<std::uint32_t>(course::remote::Op::malloc_device),
                                      g_request.lane, 1, "", 0);
    out.put<int>(x + 1);
    if (mode == "long_reply") out.put<int>(0);
    reply(0, out.bytes(), out.bytes().size());
  }
}
