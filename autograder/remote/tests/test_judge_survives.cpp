// The judge against a worker that misbehaves in every way the protocol allows
// (hostile_worker.cpp): each misbehaviour fails the test it happens in with a message naming
// what happened, and the next test gets a fresh, honest worker.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "course_remote.hpp"

#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>
#include <string>

int remote_probe(int x);
COURSE_REMOTE_FUNCTION(int, remote_probe, (int x), (x))
void remote_call_back(const std::function<void(int)>& f, int x);
COURSE_REMOTE_FUNCTION(void, remote_call_back, (const std::function<void(int)>& f, int x), (f, x))

namespace {

/// The message of the WorkerFailure that `remote_probe` throws under `mode`.
std::string failure_under(const char* mode) {
  ::setenv("HOSTILE_MODE", mode, 1);
  try {
    remote_probe(1);
  } catch (const course::remote::WorkerFailure& e) {
    ::setenv("HOSTILE_MODE", "honest", 1);
    return e.what();
  }
  ::setenv("HOSTILE_MODE", "honest", 1);
  return "(no failure)";
}

}  // namespace

TEST(JudgeSurvives, AnHonestWorkerAnswers) {
  ::setenv("HOSTILE_MODE", "honest", 1);
  EXPECT_EQ(remote_probe(41), 42);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, 16), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
}

TEST(JudgeSurvives, AWorkerKilledBySignalIsNamed) {
  EXPECT_NE(failure_under("segv").find("killed by SIGSEGV during remote_probe"), std::string::npos)
      << failure_under("segv");
}

TEST(JudgeSurvives, AWorkerThatExitsMidCallIsNamed) {
  EXPECT_NE(failure_under("exit0").find("exited with code 0 during remote_probe"), std::string::npos);
}

TEST(JudgeSurvives, AHugeReplyIsRefusedWithoutAllocating) {
  EXPECT_NE(failure_under("huge").find("malformed reply"), std::string::npos);
}

TEST(JudgeSurvives, AShortReplyIsAFailure) { EXPECT_NE(failure_under("short").find("exited"), std::string::npos); }

TEST(JudgeSurvives, AnUnknownStatusIsRefused) {
  EXPECT_NE(failure_under("bad_status").find("malformed reply"), std::string::npos);
}

TEST(JudgeSurvives, AnUnknownExceptionKindIsRefused) {
  EXPECT_NE(failure_under("bad_exception").find("broke the protocol"), std::string::npos);
}

TEST(JudgeSurvives, AChildHoldingTheChannelDoesNotHangTheJudge) {
  EXPECT_NE(failure_under("silent_child").find("exited with code 0"), std::string::npos);
}

TEST(JudgeSurvives, ALongerReplyThanTheResultIsRefused) {
  EXPECT_NE(failure_under("long_reply").find("broke the protocol (a reply longer than the result)"), std::string::npos);
}

TEST(JudgeSurvives, AReplyToARequestNotYetMadeIsRefused) {
  // The injected reply would be taken as the answer to the next request; its nonce is wrong.
  ::setenv("HOSTILE_MODE", "ahead", 1);
  EXPECT_EQ(remote_probe(1), 2);
  try {
    cudaDeviceSynchronize();
    ADD_FAILURE() << "a reply sent ahead of its request was accepted";
  } catch (const course::remote::WorkerFailure& e) {
    EXPECT_NE(std::string(e.what()).find("a reply to a request that was not this one"), std::string::npos) << e.what();
  }
  ::setenv("HOSTILE_MODE", "honest", 1);
}

TEST(JudgeSurvives, LaterRequestsOfAFailedTestFailAtOnce) {
  failure_under("segv");
  try {
    remote_probe(1);
    ADD_FAILURE() << "a request after the worker died was answered";
  } catch (const course::remote::WorkerFailure& e) {
    EXPECT_NE(std::string(e.what()).find("had already failed in this test"), std::string::npos) << e.what();
  }
}

TEST(JudgeSurvives, TheNextTestGetsAFreshWorker) { EXPECT_EQ(remote_probe(1), 2); }

TEST(JudgeSurvives, ACallbackTheTestNeverPassedIsRefused) {
  EXPECT_NE(failure_under("unknown_callback").find("a call of a function the test did not pass"), std::string::npos)
      << failure_under("unknown_callback");
}

TEST(JudgeSurvives, ALaneTheJudgeDidNotOpenIsRefused) {
  EXPECT_NE(failure_under("foreign_lane").find("a lane the judge did not open"), std::string::npos)
      << failure_under("foreign_lane");
}

TEST(JudgeSurvives, TheTestsFunctionsAreCalledBackOnEitherLane) {
  ::setenv("HOSTILE_MODE", "honest", 1);
  std::mutex mutex;
  std::vector<std::pair<int, bool>> calls;  // argument, on the test's own thread
  const std::thread::id test_thread = std::this_thread::get_id();
  remote_call_back([&](int x) {
    std::lock_guard<std::mutex> lock(mutex);
    calls.emplace_back(x, std::this_thread::get_id() == test_thread);
  }, 41);
  // On the request's lane, the waiting test thread runs it; on a lane the worker opened, a
  // thread of the judge does.
  EXPECT_EQ(calls, (std::vector<std::pair<int, bool>>{{41, true}, {42, false}}));
}

TEST(JudgeSurvives, WhatTheTestsFunctionThrowsReachesTheTest) {
  ::setenv("HOSTILE_MODE", "honest", 1);
  try {
    remote_call_back([](int x) { throw std::out_of_range("no batch " + std::to_string(x)); }, 7);
    ADD_FAILURE() << "the exception was lost on the way";
  } catch (const std::out_of_range& e) {
    EXPECT_EQ(std::string(e.what()), "no batch 7");
  }
}

TEST(JudgeSurvives, MoreCallingThreadsThanTheJudgeServesAreRefused) {
  ::setenv("HOSTILE_MODE", "many_lanes", 1);
  std::string what = "(no failure)";
  try {
    remote_call_back([](int) {}, 0);
  } catch (const course::remote::WorkerFailure& e) {
    what = e.what();
  }
  ::setenv("HOSTILE_MODE", "honest", 1);
  EXPECT_NE(what.find("more threads calling back than the judge serves"), std::string::npos) << what;
}

TEST(JudgeSurvives, AReplyOpeningALaneIsRefused) {
  EXPECT_NE(failure_under("reply_on_own_lane").find("a reply on a lane it had not opened"), std::string::npos)
      << failure_under("reply_on_own_lane");
}

TEST(JudgeSurvives, ARequestOtherThanACallbackIsRefused) {
  EXPECT_NE(failure_under("judge_request").find("a request the judge does not serve"), std::string::npos)
      << failure_under("judge_request");
}
