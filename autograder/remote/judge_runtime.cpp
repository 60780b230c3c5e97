// The judge's side of a split test program (course_remote.hpp): it starts the worker that
// runs the submission, and provides the CUDA runtime calls the tests and the harness make, each
// forwarded to the worker. The judge never loads the submission: a test's comparisons, its
// verdict, the performance figures and the signed result file are made here, from data the
// worker sent as bytes or left in the shared host memory, which the judge checks before it
// believes a pointer into it.
//
// One fresh worker per test (a GoogleTest listener ends the previous one): what a test's
// submission did cannot leak into the next test, and a crash costs the test it happened in.
// A worker that dies, or breaks the protocol, fails the running test with a WorkerFailure
// naming what it was doing; the test's later requests fail at once (its device buffers died
// with it), and the event goes into the signed results ("worker <test> <what>"), so that the
// grader can say the exercise crashed.
//
// One thread of the judge reads the channel and hands each message to the lane it belongs to
// (course_remote.hpp): the judge thread that made a request waits for its reply there, and
// serves the callbacks the worker makes meanwhile; a lane the worker opens (a thread of the
// submission calling back) gets a judge thread of its own, which serves it.
//
// The worker runs in fresh user and PID namespaces where the kernel allows it (the grader's
// sandbox, tools/course/sandbox.py, already hides the file system and the network for both):
// it cannot name the judge's process to signal or trace it, and its own children die with
// it. The judge is also made non-dumpable, so that where namespaces are refused a process of
// the same user still cannot read or write its memory through /proc or ptrace.
#define COURSE_REMOTE_JUDGE 1
#include "course_remote.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "course_perf.hpp"
#include "course_traffic.hpp"
#include "remote_traffic.hpp"
#include "cuda_check.hpp"

#include <cudasim/link_model.hpp>
#include <cudasim/stats.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace course {
namespace remote {
namespace {

constexpr int kChannel = 3;          // the worker's end of the socket pair
constexpr int kSharedMemoryFile = 4; // the worker's descriptor of the shared host memory
/// The most lanes a worker may open (threads of the submission that call back): each costs the
/// judge a thread.
constexpr std::uint64_t kMaxWorkerLanes = 256;

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

/// The environment the worker gets: the judge's, without the grader's own variables.
std::vector<std::string> worker_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "COURSE_", 7) != 0) env.emplace_back(*e);
  return env;
}

/// 64 random bits from the kernel, one request's nonce (course_remote.hpp, Header). Drawn 512
/// at a time: lesson 05's tests make thousands of requests, and a system call for each was a
/// tenth of their time. The unused ones sit in the judge's memory, out of the worker's reach
/// like the rest of it.
std::uint64_t fresh_nonce() {
  static std::mutex mutex;
  static std::uint64_t pool[512];
  static std::size_t used = sizeof pool / sizeof pool[0];
  std::lock_guard<std::mutex> lock(mutex);
  if (used == sizeof pool / sizeof pool[0]) {
    char* p = reinterpret_cast<char*>(pool);
    std::size_t left = sizeof pool;
    while (left > 0) {
      const ssize_t got = ::getrandom(p, left, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) throw WorkerFailure("the grader could not draw a random nonce");
      p += got;
      left -= static_cast<std::size_t>(got);
    }
    used = 0;
  }
  return pool[used++];
}

/// Forks on one thread that lives as long as the judge, and runs `child` in the child (it must
/// not return). The worker's chain of processes is killed when its parent goes
/// (PR_SET_PDEATHSIG), and "its parent" is the thread that forked it: a test's own thread (a
/// deadline's, say) that forked the worker and then ended would take the worker with it.
pid_t fork_from_lasting_thread(const std::function<void()>& child) {
  struct Launcher {
    std::mutex mutex;
    std::condition_variable wake, done;
    const std::function<void()>* child = nullptr;
    pid_t pid = 0;
    int error = 0;
    bool finished = false;
  };
  static Launcher* launcher = [] {
    auto* l = new Launcher;
    std::thread([l] {
      std::unique_lock<std::mutex> lock(l->mutex);
      for (;;) {
        l->wake.wait(lock, [&] { return l->child != nullptr; });
        l->pid = ::fork();
        if (l->pid == 0) (*l->child)();  // never returns
        l->error = errno;
        l->child = nullptr;
        l->finished = true;
        l->done.notify_all();
      }
    }).detach();
    return l;
  }();
  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> turn(one_at_a_time);
  std::unique_lock<std::mutex> lock(launcher->mutex);
  launcher->finished = false;
  launcher->child = &child;
  launcher->wake.notify_all();
  launcher->done.wait(lock, [&] { return launcher->finished; });
  errno = launcher->error;
  return launcher->pid;
}

// ---- the shared host memory (course_remote.hpp, SharedHostMemory) ----------------------------

/// The region is reserved once, at kSharedHostAddress where that is free; each worker gets a
/// fresh memory file mapped over it, so that nothing one test's submission left there is seen
/// by the next. Between workers, private zero pages stand in: a judge thread still looking
/// at the old test's memory reads zeros instead of faulting.
class SharedRegion {
 public:
  static SharedRegion& get() {
    static SharedRegion* one = new SharedRegion;  // never destroyed: threads may outlive main
    return *one;
  }

  /// A fresh memory file of the region's size, mapped over it; its descriptor (to hand to the
  /// worker, which maps it at the same address) or -1 where memory files or the region are
  /// not available (the exercises that need it then say so).
  int renew() {
    std::lock_guard<std::mutex> lock(mutex_);
    mapped_ = false;
    if (base_ == nullptr) return -1;
    const int file = ::memfd_create("course-shared-host-memory", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (file < 0) return -1;
    // Sealed at its size: the worker cannot shrink it, which would make the judge's reads fault.
    if (::ftruncate(file, static_cast<off_t>(kSharedHostBytes)) != 0 ||
        ::fcntl(file, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
        ::mmap(base_, kSharedHostBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, file, 0) == MAP_FAILED) {
      ::close(file);
      blank();
      return -1;
    }
    mapped_ = true;
    return file;
  }

  /// The worker has ended: its memory file goes, zero pages take its place.
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (mapped_) blank();
    mapped_ = false;
  }

  SharedHostMemory view() {
    std::lock_guard<std::mutex> lock(mutex_);
    SharedHostMemory memory;
    if (mapped_) {
      memory.base = static_cast<char*>(base_);
      memory.bytes = kSharedHostBytes;
    }
    return memory;
  }

  std::uintptr_t address() const { return reinterpret_cast<std::uintptr_t>(base_); }

 private:
  SharedRegion() {
    void* wanted = reinterpret_cast<void*>(kSharedHostAddress);
    void* got = ::mmap(wanted, kSharedHostBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == MAP_FAILED)  // taken here: wherever the kernel puts it (the worker is told where)
      got = ::mmap(nullptr, kSharedHostBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base_ = got == MAP_FAILED ? nullptr : got;
  }

  void blank() {
    ::mmap(base_, kSharedHostBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
           -1, 0);
  }

  std::mutex mutex_;
  void* base_ = nullptr;
  bool mapped_ = false;
};

// ---- the test's callbacks (course_remote.hpp, add_callback) -----------------------------------

struct CallbackEntry {
  CallbackBody body;
  std::mutex mutex;
  std::condition_variable idle;
  int running = 0;
};

class Callbacks {
 public:
  static Callbacks& get() {
    static Callbacks* one = new Callbacks;
    return *one;
  }
  std::uint64_t add(CallbackBody body) {
    auto entry = std::make_shared<CallbackEntry>();
    entry->body = std::move(body);
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t id = next_id_++;
    entries_[id] = std::move(entry);
    return id;
  }
  void remove(std::uint64_t id) {
    std::shared_ptr<CallbackEntry> entry;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = entries_.find(id);
      if (found == entries_.end()) return;
      entry = std::move(found->second);
      entries_.erase(found);
    }
    std::unique_lock<std::mutex> lock(entry->mutex);
    entry->idle.wait(lock, [&] { return entry->running == 0; });
  }
  /// Runs callback `id`; false when there is none by that id.
  bool run(std::uint64_t id, Reader& in, Writer& out) {
    std::shared_ptr<CallbackEntry> entry;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = entries_.find(id);
      if (found == entries_.end()) return false;
      entry = found->second;
      std::lock_guard<std::mutex> running(entry->mutex);
      ++entry->running;
    }
    struct Done {
      CallbackEntry& entry;
      ~Done() {
        std::lock_guard<std::mutex> lock(entry.mutex);
        if (--entry.running == 0) entry.idle.notify_all();
      }
    } done{*entry};
    entry->body(in, out);
    return true;
  }
  /// Between tests: no callback of the last test can be reached any more.
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
  }

 private:
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<CallbackEntry>> entries_;
  std::uint64_t next_id_ = 1;
};

// ---- the worker and its channel -----------------------------------------------------------------

/// The failures recorded in the signed results ("worker <test> <kind>"), from any thread.
void record_worker_event(const std::string& kind) {
  static std::mutex mutex;
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = test ? std::string(test->test_suite_name()) + "." + test->name() : "(no test)";
  std::lock_guard<std::mutex> lock(mutex);
  course::perf::lines().push_back("worker " + name + " " + kind);
}

/// Which lane the calling thread talks on, for which connection, and the device the judge
/// last set or read there (-1 when unknown: the judge's DeviceGuards ask for it, and set it,
/// around almost every call of lesson 05).
struct ThreadLane {
  std::uint64_t connection = 0;
  std::uint64_t lane = 0;
  int device = -1;
};
thread_local ThreadLane t_lane;

/// One worker process and its channel, shared by the judge threads that talk to it.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  static std::shared_ptr<Connection> start() {
    std::shared_ptr<Connection> connection(new Connection);
    connection->launch();
    return connection;
  }

  ~Connection() {
    stop();
    if (channel_ >= 0) ::close(channel_);
  }

  /// Sends a request on the calling thread's lane and returns the reply's payload (its status
  /// in `status`), serving the worker's callbacks on the lane meanwhile.
  std::string exchange(Op op, const std::string& arguments, Status& status, const char* what) {
    const std::uint64_t lane = lane_of_this_thread();
    if (failed_) throw WorkerFailure("the submission's process had already failed in this test (" + failure() + ")");
    // The submission's code may make another device current (cudaSetDevice persists in the
    // worker's thread): after a contract call the judge no longer knows which one is.
    if (op == Op::call) t_lane.device = -1;
    const std::uint64_t nonce = fresh_nonce();
    if (!sender_->send(Header{static_cast<std::uint32_t>(Kind::request), static_cast<std::uint32_t>(op), lane, nonce,
                             arguments.size()},
                      arguments))
      fail(what);
    Message reply;
    Awaited awaited = Awaited::closed;
    try {
      awaited = await_reply(boxes_, lane, nonce, [&](const Message& request) { serve_callback(lane, request); }, reply);
    } catch (const ProtocolError& e) {
      fail_protocol(what, e.what());
    }
    if (awaited == Awaited::closed) fail(what);
    status = static_cast<Status>(reply.header.code);
    return std::move(reply.payload);
  }

  /// Ends the worker (between tests, at the end of the program). Threads still waiting on it
  /// get a WorkerFailure that records nothing: the test they belonged to is over. The channel
  /// is shut, not closed, until the last of them has let go of the connection: a descriptor
  /// number reused by the next test's channel must not receive this one's late replies.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (stopped_) return;
      stopped_ = true;
      stopping_ = true;
    }
    if (pid_ > 0) ::kill(pid_, SIGKILL);
    if (channel_ >= 0) ::shutdown(channel_, SHUT_RDWR);
    if (reader_.joinable()) reader_.join();
    boxes_.close();
    if (status_pipe_ >= 0) ::close(status_pipe_);
    status_pipe_ = -1;
    if (pid_ > 0) {
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
    SharedRegion::get().release();
  }

  bool failed() const { return failed_; }

  /// A message that made no sense: the worker is ended, the test fails.
  [[noreturn]] void fail_protocol(const char* what, const std::string& why) {
    end("broke the protocol (" + why + ")", "protocol");
    fail(what);
  }

  /// The device cached for the calling thread's lane (ThreadLane).
  int& lane_device() {
    lane_of_this_thread();
    return t_lane.device;
  }

 private:
  Connection() : id_(next_connection_id().fetch_add(1) + 1) {}

  static std::atomic<std::uint64_t>& next_connection_id() {
    static std::atomic<std::uint64_t> next{0};
    return next;
  }

  std::uint64_t lane_of_this_thread() {
    if (t_lane.connection != id_) t_lane = ThreadLane{id_, next_judge_lane_.fetch_add(2), -1};
    return t_lane.lane;
  }

  std::string failure() {
    std::lock_guard<std::mutex> lock(state_mutex_);
    return failure_;
  }

  void launch() {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw WorkerFailure(std::string("the grader could not start the worker: socketpair: ") + std::strerror(errno));
    int status_pipe[2];
    if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
      ::close(pair[0]);
      ::close(pair[1]);
      throw WorkerFailure(std::string("the grader could not start the worker: pipe: ") + std::strerror(errno));
    }
    const int shared_file = SharedRegion::get().renew();
    const std::vector<std::string> env = worker_environment();
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    char address[32], bytes[32];
    std::snprintf(address, sizeof address, "%#llx", static_cast<unsigned long long>(SharedRegion::get().address()));
    std::snprintf(bytes, sizeof bytes, "%zu", kSharedHostBytes);
    std::vector<char*> argv = {const_cast<char*>(worker_executable())};
    if (shared_file >= 0) argv.insert(argv.end(), {const_cast<char*>("--shared-host-memory"), address, bytes});
    argv.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t pid = fork_from_lasting_thread(
        [&] { run_child(pair[1], status_pipe[1], shared_file, argv.data(), envp.data()); });
    if (pid < 0) {
      const std::string why = std::strerror(errno);
      for (int fd : {pair[0], pair[1], status_pipe[0], status_pipe[1], shared_file})
        if (fd >= 0) ::close(fd);
      throw WorkerFailure("the grader could not start the worker: fork: " + why);
    }
    ::close(pair[1]);
    ::close(status_pipe[1]);
    if (shared_file >= 0) ::close(shared_file);
    channel_ = pair[0];
    status_pipe_ = status_pipe[0];
    pid_ = pid;
    sender_ = std::make_unique<Sender>(channel_);
    reader_ = std::thread([this] { read_loop(); });
  }

  /// Whether a mount of file-system type `type` lives in memory or the kernel (bounded, or no
  /// files at all) rather than on a disk.
  static bool in_memory_file_system(const char* type) {
    static const char* const kinds[] = {"tmpfs", "ramfs", "proc", "sysfs", "devtmpfs", "devpts", "mqueue",
                                        "cgroup", "cgroup2", "securityfs", "debugfs", "tracefs", "bpf",
                                        "pstore", "configfs", "fusectl", "hugetlbfs", "binfmt_misc", "autofs",
                                        "efivarfs", "nsfs", "rpc_pipefs", "selinuxfs"};
    for (const char* kind : kinds)
      if (std::strcmp(type, kind) == 0) return true;
    return false;
  }

  /// Decodes mountinfo's octal escapes (\040 for a space) in place.
  static void unescape_mount_path(char* path) {
    char* out = path;
    for (const char* in = path; *in != '\0'; ++in) {
      if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' &&
          in[3] <= '7') {
        *out++ = static_cast<char>((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
        in += 3;
      } else {
        *out++ = *in;
      }
    }
    *out = '\0';
  }

  /// In the worker's own mount namespace: every writable mount on a disk becomes read-only, so
  /// that a submission cannot fill the grading machine's disk (a hostile one writing files
  /// of the largest size allowed, one after another, into its working folder would, and with
  /// it every grade-all result written after). What stays writable is in memory and bounded:
  /// the sandbox's hiding folders (the temporary folder among them) and /dev/shm. Runs between
  /// fork and exec in a process with threads, so only system calls: no allocation, no stdio.
  static void make_disk_mounts_read_only() {
    static char text[1 << 17];
    const int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    std::size_t used = 0;
    for (ssize_t got; used + 1 < sizeof text && (got = ::read(fd, text + used, sizeof text - 1 - used)) != 0;) {
      if (got < 0) {
        if (errno == EINTR) continue;
        break;
      }
      used += static_cast<std::size_t>(got);
    }
    ::close(fd);
    text[used] = '\0';
    // Each line: id parent major:minor root mount-point options [optional...] - type source super-options
    struct Mount {
      char* point;
      const char* options;
      const char* type;
    };
    static Mount mounts[4096];
    std::size_t n = 0;
    for (char* line = text; line != nullptr && *line != '\0' && n < sizeof mounts / sizeof mounts[0];) {
      char* end = std::strchr(line, '\n');
      if (end != nullptr) *end = '\0';
      char* fields[6] = {};
      char* p = line;
      int count = 0;
      for (; count < 6 && p != nullptr; ++count) {
        fields[count] = p;
        p = std::strchr(p, ' ');
        if (p != nullptr) *p++ = '\0';
      }
      const char* type = nullptr;
      if (count == 6 && p != nullptr) {  // p: the optional fields, then "- type ..."
        char* dash = std::strncmp(p, "- ", 2) == 0 ? p : std::strstr(p, " - ");
        if (dash != nullptr) {
          char* t = dash + (dash == p ? 2 : 3);
          if (char* space = std::strchr(t, ' ')) *space = '\0';
          type = t;
        }
      }
      if (type != nullptr) {
        unescape_mount_path(fields[4]);
        mounts[n++] = Mount{fields[4], fields[5], type};
      }
      line = end != nullptr ? end + 1 : nullptr;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Mount& m = mounts[i];
      if (std::strncmp(m.options, "rw", 2) != 0 || in_memory_file_system(m.type)) continue;
      bool covered = false;  // a later mount on the same folder hides this one: leave that one be
      for (std::size_t j = i + 1; j < n && !covered; ++j) covered = std::strcmp(mounts[j].point, m.point) == 0;
      if (covered) continue;
      // The flags the sandbox set are locked in a less privileged namespace: keep them.
      unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
      if (std::strstr(m.options, "nosuid")) flags |= MS_NOSUID;
      if (std::strstr(m.options, "nodev")) flags |= MS_NODEV;
      if (std::strstr(m.options, "noexec")) flags |= MS_NOEXEC;
      if (std::strstr(m.options, "noatime")) flags |= MS_NOATIME;
      if (std::strstr(m.options, "nodiratime")) flags |= MS_NODIRATIME;
      if (std::strstr(m.options, "relatime")) flags |= MS_RELATIME;
      ::mount(nullptr, m.point, nullptr, flags, nullptr);
    }
  }

  /// In the child: the namespaces, then a reaper that is PID 1 of the new PID namespace (so
  /// that every process the worker leaves behind dies with it), and under it the worker. The
  /// worker itself is not PID 1: a namespace's first process ignores the signals it sends
  /// itself (raise, abort), which would let a crash go unseen. The reaper reports how the
  /// worker ended on the status pipe.
  [[noreturn]] static void run_child(int channel, int status_pipe, int shared_file, char** argv, char** envp) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A user namespace of its own (no capability over the judge's), a PID namespace (the
    // judge cannot be named) and a mount namespace (its disks read-only). Network and IPC are
    // the sandbox's already (empty, private); where the sandbox has no namespaces, neither can
    // this, and the report says so.
    if (::unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) == 0) {
      make_disk_mounts_read_only();
    } else if (::unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) {
    }
    const pid_t reaper = ::fork();
    if (reaper < 0) ::_exit(127);
    if (reaper > 0) {
      int ignored = 0;
      while (::waitpid(reaper, &ignored, 0) < 0 && errno == EINTR) {
      }
      ::_exit(0);
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const pid_t worker = ::fork();
    if (worker < 0) ::_exit(127);
    if (worker == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      // Both descriptors go above the worker's numbers first. Either may already be 3 or 4
      // (another judge thread closing a descriptor while this one is set up can leave a low
      // number free): dup2(channel, 3) would then close a memory file that was 3, and a dup2
      // of a descriptor onto itself keeps close-on-exec. Either way the worker finds no memory
      // file on 4 and exits with kNoSharedMemory: the likely cause of the exit 126 seen in
      // about one run of lesson 04's tests in a hundred under load.
      const int channel_copy = ::fcntl(channel, F_DUPFD, kSharedMemoryFile + 1);
      const int shared_copy = shared_file >= 0 ? ::fcntl(shared_file, F_DUPFD, kSharedMemoryFile + 1) : -1;
      if (channel_copy < 0 || (shared_file >= 0 && shared_copy < 0)) ::_exit(127);
      if (::dup2(channel_copy, kChannel) < 0) ::_exit(127);
      if (shared_copy >= 0 && ::dup2(shared_copy, kSharedMemoryFile) < 0) ::_exit(127);
      ::closefrom(shared_file >= 0 ? kSharedMemoryFile + 1 : kChannel + 1);
      ::execve(argv[0], argv, envp);
      ::_exit(127);
    }
    ::close(channel);
    int status = 0;
    while (::waitpid(worker, &status, 0) < 0 && errno == EINTR) {
    }
    ssize_t ignored = ::write(status_pipe, &status, sizeof status);
    (void)ignored;
    ::_exit(0);
  }

  // ---- the reader thread ----

  /// Reads every message and hands it to its lane, until the worker has gone; then says how.
  void read_loop() {
    for (;;) {
      Message message;
      Header& header = message.header;
      if (!read_exactly(&header, sizeof header)) break;
      const bool is_request = header.kind == static_cast<std::uint32_t>(Kind::request);
      if ((!is_request && header.kind != static_cast<std::uint32_t>(Kind::reply)) || header.size > kMaxMessageBytes ||
          (!is_request && header.code > static_cast<std::uint32_t>(Status::exception))) {
        end("broke the protocol (it sent a malformed reply)", "protocol");
        return;
      }
      if (const char* why = refuse_lane(header)) {
        end(std::string("broke the protocol (") + why + ")", "protocol");
        return;
      }
      message.payload.resize(static_cast<std::size_t>(header.size));
      if (!read_exactly(&message.payload[0], message.payload.size())) break;
      boxes_.deliver(std::move(message));
    }
    std::string kind;
    const std::string how = how_it_ended(kind);
    end(how, kind);
  }

  /// Why the worker may not use `header.lane`, or null; opens the worker's new lanes.
  const char* refuse_lane(const Header& header) {
    if (header.lane == 0) return "a message on no lane";
    if (header.lane % 2 == 0)
      return header.lane < next_judge_lane_.load() ? nullptr : "a message on a lane the judge did not open";
    if (worker_lanes_.count(header.lane) != 0) return nullptr;
    if (header.kind != static_cast<std::uint32_t>(Kind::request)) return "a reply on a lane it had not opened";
    if (worker_lanes_.size() >= kMaxWorkerLanes) return "more threads calling back than the judge serves";
    worker_lanes_.insert(header.lane);
    std::thread([self = shared_from_this(), lane = header.lane] { self->serve_worker_lane(lane); }).detach();
    return nullptr;
  }

  bool read_exactly(void* data, std::size_t size) {
    return read_fully(channel_, data, size, [this] { return wait_for_data(); });
  }

  /// Waits until the channel has data, or the worker has ended. A descendant that the
  /// worker left behind may hold the channel open (where no PID namespace ends it with the
  /// worker): the worker's end, reported on the status pipe, is what counts.
  bool wait_for_data() {
    for (;;) {
      pollfd watched[2] = {{channel_, POLLIN, 0}, {status_pipe_, POLLIN, 0}};
      const int ready = ::poll(watched, 2, -1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return false;
      if (watched[0].revents & POLLIN) return true;
      if (watched[0].revents & (POLLHUP | POLLERR)) return false;
      if (watched[1].revents) return false;  // the worker has ended without answering
    }
  }

  /// How the worker ended, in words, after its channel closed (`kind`: for the signed results).
  std::string how_it_ended(std::string& kind) {
    std::string how = "ended without answering";
    kind = "exited";
    int status = 0;
    // A worker that closed its channel but lives on gets two seconds to end, then is ended.
    pollfd ended = {status_pipe_, POLLIN, 0};
    if (::poll(&ended, 1, 2000) == 1 &&
        ::read(status_pipe_, &status, sizeof status) == static_cast<ssize_t>(sizeof status)) {
      if (WIFSIGNALED(status)) {
        how = "was killed by " + signal_text(WTERMSIG(status));
        kind = "crashed " + signal_text(WTERMSIG(status));
      } else if (WIFEXITED(status)) {
        how = "exited with code " + std::to_string(WEXITSTATUS(status));
        if (WEXITSTATUS(status) == 127) how += " (the worker program could not be started)";
        if (WEXITSTATUS(status) == 126) how += " (the worker could not map the judge's shared host memory)";
        kind = "exited " + std::to_string(WEXITSTATUS(status));
      }
    }
    return how;
  }

  // ---- callbacks ----

  /// Serves a lane the worker opened: a thread of the submission calling back.
  void serve_worker_lane(std::uint64_t lane) {
    t_lane = ThreadLane{id_, lane, -1};
    Message message;
    while (boxes_.take(lane, message)) {
      try {
        if (message.header.kind != static_cast<std::uint32_t>(Kind::request))
          throw ProtocolError("a reply to a request that was not this one");
        serve_callback(lane, message);
      } catch (const ProtocolError& e) {
        end(std::string("broke the protocol (") + e.what() + ")", "protocol");
        return;
      } catch (const WorkerFailure&) {
        return;  // the worker has gone; the test's own thread says so
      }
    }
  }

  /// Runs the callback a request names and sends its reply on `lane`. What the callback throws
  /// goes back to the worker; a malformed request throws ProtocolError.
  void serve_callback(std::uint64_t lane, const Message& request) {
    if (request.header.code != static_cast<std::uint32_t>(Op::callback))
      throw ProtocolError("a request the judge does not serve");
    Reader in(request.payload);
    const auto id = in.get<std::uint64_t>();
    Writer out;
    Status status = Status::ok;
    try {
      if (!Callbacks::get().run(id, in, out)) throw ProtocolError("a call of a function the test did not pass, or no longer does");
      if (!in.at_end()) throw ProtocolError("a callback's arguments longer than its parameters");
    } catch (const ProtocolError&) {
      throw;
    } catch (...) {
      out = Writer();
      put_exception(out, std::current_exception());
      status = Status::exception;
    }
    sender_->send(Header{static_cast<std::uint32_t>(Kind::reply), static_cast<std::uint32_t>(status), lane,
                         request.header.nonce, out.bytes().size()},
                  out.bytes());
  }

  // ---- failures ----

  /// The worker has gone, or must go: the first reason given is the one reported; every
  /// waiting thread wakes.
  void end(const std::string& how, const std::string& kind) {
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (how_.empty()) {
        how_ = how;
        kind_ = kind;
      }
      // Under the lock: once stop() has begun, the process may have been reaped and its
      // number given to another.
      if (!stopped_ && pid_ > 0) ::kill(pid_, SIGKILL);
    }
    failed_ = true;
    ended_.notify_all();
    boxes_.close();
  }

  /// The worker ended during `what`: the failure is recorded (once) and thrown.
  [[noreturn]] void fail(const char* what) {
    std::unique_lock<std::mutex> lock(state_mutex_);
    // A send that failed may come before the reader has seen the end: it says how, soon.
    ended_.wait_for(lock, std::chrono::seconds(5), [&] { return !how_.empty() || stopping_; });
    if (stopping_) throw WorkerFailure(std::string("the test ended during ") + what);
    const std::string how = how_.empty() ? "ended without answering" : how_;
    failed_ = true;
    if (failure_.empty()) {
      failure_ = "it " + how + " during " + what;
      lock.unlock();
      record_worker_event(kind_.empty() ? "exited" : kind_);
    }
    throw WorkerFailure("the submission's process " + how + " during " + what);
  }

  const std::uint64_t id_;
  pid_t pid_ = -1;
  int channel_ = -1;
  int status_pipe_ = -1;
  std::unique_ptr<Sender> sender_;
  std::thread reader_;
  Mailboxes boxes_;
  std::atomic<std::uint64_t> next_judge_lane_{2};
  std::set<std::uint64_t> worker_lanes_;  // the lanes the worker opened: the reader's alone
  std::atomic<bool> failed_{false};
  std::mutex state_mutex_;
  std::condition_variable ended_;
  std::string how_, kind_, failure_;
  bool stopping_ = false, stopped_ = false;
};

/// The current test's connection, started at its first request.
class Workers {
 public:
  std::shared_ptr<Connection> current() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!connection_) connection_ = Connection::start();
    return connection_;
  }
  /// The current connection, if any, without starting one.
  std::shared_ptr<Connection> existing() {
    std::lock_guard<std::mutex> lock(mutex_);
    return connection_;
  }
  void stop() {
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      connection = std::move(connection_);
    }
    if (connection) connection->stop();
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<Connection> connection_;
};

Workers& workers() {
  static Workers* one = new Workers;  // never destroyed: the listener stops the last worker
  return *one;
}

bool worker_failed() {
  const std::shared_ptr<Connection> connection = workers().existing();
  return connection && connection->failed();
}

/// The device allocations of the current worker: to tell device from host pointers for
/// cudaMemcpyDefault, and to free nothing of a worker that has gone.
class Allocations {
 public:
  void add(const void* pointer, std::uint64_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[address(pointer)] = size;
  }
  /// Forgets `pointer`; false when it was not a live allocation of this worker.
  bool remove(const void* pointer) {
    std::lock_guard<std::mutex> lock(mutex_);
    return sizes_.erase(address(pointer)) != 0;
  }
  bool contains(const void* pointer) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t at = address(pointer);
    auto after = sizes_.upper_bound(at);
    if (after == sizes_.begin()) return false;
    --after;
    return at < after->first + std::max<std::uint64_t>(after->second, 1);
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_.clear();
  }
  static std::uint64_t address(const void* pointer) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(pointer));
  }

 private:
  std::mutex mutex_;
  std::map<std::uint64_t, std::uint64_t> sizes_;
};

Allocations& allocations() {
  static Allocations* all = new Allocations;
  return *all;
}

/// Ends each test's worker, so that the next test starts a fresh one.
class WorkerPerTest : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo&) override { reset(); }
  void OnTestEnd(const ::testing::TestInfo&) override { reset(); }
  void OnTestProgramEnd(const ::testing::UnitTest&) override { reset(); }

 private:
  static void reset() {
    workers().stop();
    allocations().clear();
    Callbacks::get().clear();
  }
};

// Before any test: the judge cannot be traced or read through /proc by a process of the same
// user (the worker, where namespaces are refused), and the listener is in place.
const bool g_judge_ready = [] {
  ::prctl(PR_SET_DUMPABLE, 0);
  ::testing::UnitTest::GetInstance()->listeners().Append(new WorkerPerTest);
  return true;
}();

}  // namespace

SharedHostMemory shared_host_memory() { return SharedRegion::get().view(); }

std::uint64_t add_callback(CallbackBody body) { return Callbacks::get().add(std::move(body)); }
void remove_callback(std::uint64_t id) { Callbacks::get().remove(id); }

void protocol_failure(const char* what, const std::string& why) {
  const std::shared_ptr<Connection> connection = workers().existing();
  if (!connection) throw WorkerFailure(std::string("the test ended during ") + what);
  connection->fail_protocol(what, why);
}

std::string request(Op op, const std::string& arguments, const char* what) {
  const std::shared_ptr<Connection> connection = workers().current();
  Status status = Status::ok;
  std::string reply = connection->exchange(op, arguments, status, what);
  if (status == Status::exception) {
    Reader in(reply);
    try {
      throw_exception(in);
    } catch (const ProtocolError& e) {
      connection->fail_protocol(what, e.what());
    }
  }
  return reply;
}

namespace {

/// A call whose reply begins with a status (a cudaError_t, a cublasStatus_t); `read` takes the
/// rest.
template <class Code, class Read>
Code status_call(Op op, const Writer& arguments, const char* what, Read read) {
  return read_reply(request(op, arguments.bytes(), what), what, [&](Reader& in) {
    const auto code = static_cast<Code>(in.get<std::int32_t>());
    read(in);
    return code;
  });
}

template <class Read>
cudaError_t runtime_call(Op op, const Writer& arguments, const char* what, Read read) {
  return status_call<cudaError_t>(op, arguments, what, read);
}

cudaError_t runtime_call(Op op, const Writer& arguments, const char* what) {
  return runtime_call(op, arguments, what, [](Reader&) {});
}

/// For calls that must not throw (destructors free memory): a failed worker frees nothing.
template <class Call>
cudaError_t quietly(Call call) {
  if (worker_failed()) return cudaSuccess;
  try {
    return call();
  } catch (...) {
    return cudaErrorUnknown;
  }
}

/// For calls that destructors make (RankGroup's, DeviceGuard's), where a second exception
/// would end the judge: once the worker has failed (the test has failed with it), they do
/// nothing, as quietly() does; while an exception unwinds the stack, a failure is an error
/// code. Otherwise they fail the test as any call does.
template <class Call>
cudaError_t unwinding_safe(Call call) {
  if (worker_failed()) return cudaSuccess;
  if (std::uncaught_exceptions() > 0) {
    try {
      return call();
    } catch (...) {
      return cudaErrorUnknown;
    }
  }
  return call();
}

bool is_device_pointer(const void* pointer) { return allocations().contains(pointer); }

/// The device cached for the calling thread's lane of the current worker.
int& lane_device() { return workers().current()->lane_device(); }

/// Error names and sentences, asked once per code (a dead worker cannot answer: a fallback).
const char* error_text(Op op, cudaError_t error) {
  static auto* known = new std::map<std::pair<int, int>, std::string>;
  static std::mutex mutex;
  const auto key = std::make_pair(static_cast<int>(op), static_cast<int>(error));
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = known->find(key);
    if (found != known->end()) return found->second.c_str();
  }
  std::string text;
  try {
    Writer out;
    out.put<std::int32_t>(error);
    const std::string reply = request(op, out.bytes(), "cudaGetErrorString");
    Reader in(reply);
    text = in.get_string(1024);
  } catch (...) {
    return error == cudaSuccess ? "no error" : "a CUDA error (the worker could not name it)";
  }
  std::lock_guard<std::mutex> lock(mutex);
  return known->emplace(key, text).first->second.c_str();
}

}  // namespace
}  // namespace remote


// ---- the traffic windows of course_traffic.hpp -------------------------------------------------

namespace test {
namespace detail {

void open_remote_traffic_window() {
  remote::request(remote::Op::traffic_open, std::string(), "count_global_traffic");
}

GlobalTraffic close_remote_traffic_window() {
  const char* what = "count_global_traffic";
  return remote::read_reply(remote::request(remote::Op::traffic_close, std::string(), what), what,
                            [](remote::Reader& in) { return remote::Marshal<GlobalTraffic>::get(in); });
}

void declare_remote_window_flops(double flops) {
  remote::Writer out;
  out.put(flops);
  remote::request(remote::Op::declare_window_flops, out.bytes(), "declare_window_flops");
}

}  // namespace detail
}  // namespace test
}  // namespace course

// ---- the CUDA runtime the tests call, forwarded ------------------------------------------------

using course::remote::Op;
using course::remote::Reader;
using course::remote::runtime_call;
using course::remote::Writer;

cudaError_t cudaMalloc(void** pointer, size_t size, const char*, unsigned) {
  if (pointer == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::uint64_t>(size);
  const cudaError_t error =
      runtime_call(Op::malloc_device, out, "cudaMalloc", [&](Reader& in) { *pointer = in.get_address<void*>(); });
  if (error == cudaSuccess && *pointer != nullptr) course::remote::allocations().add(*pointer, size);
  return error;
}

cudaError_t cudaFree(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  if (!course::remote::allocations().remove(pointer)) return cudaSuccess;  // a worker that has gone
  return course::remote::quietly([&] {
    Writer out;
    out.put_address(pointer);
    return runtime_call(Op::free_device, out, "cudaFree");
  });
}

/// cudaMemcpy and cudaMemcpyAsync (`stream` not null): host bytes travel with the request (an
/// upload) or the reply (a download); a copy on the host never leaves the judge.
static cudaError_t forward_copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                const cudaStream_t* stream) {
  if (stream && (kind == cudaMemcpyDefault || kind == cudaMemcpyHostToHost)) {
    // Where the direction is the judge's to find out: after the stream's work, synchronously.
    const cudaError_t waited = cudaStreamSynchronize(*stream);
    if (waited != cudaSuccess) return waited;
    stream = nullptr;
  }
  if (kind == cudaMemcpyDefault) {
    const bool device_dst = course::remote::is_device_pointer(dst), device_src = course::remote::is_device_pointer(src);
    kind = device_dst ? (device_src ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                      : (device_src ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  if (kind == cudaMemcpyHostToHost) {
    if (count > 0) std::memmove(dst, src, count);
    return cudaSuccess;
  }
  const Op op = stream ? Op::memcpy_async : Op::memcpy;
  const char* what = stream ? "cudaMemcpyAsync" : "cudaMemcpy";
  Writer out;
  out.put_address(dst);
  out.put_address(src);
  out.put<std::uint64_t>(count);
  out.put<std::int32_t>(kind);
  if (stream) out.put_address(*stream);
  if (kind == cudaMemcpyHostToDevice) out.put_bytes(src, count);
  if (kind != cudaMemcpyDeviceToHost) return runtime_call(op, out, what);
  return runtime_call(op, out, what, [&](Reader& in) {
    const char* bytes = in.get_bytes(count);
    if (count > 0) std::memcpy(dst, bytes, count);
  });
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return forward_copy(dst, src, count, kind, nullptr);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return forward_copy(dst, src, count, kind, &stream);
}

cudaError_t cudaMemset(void* pointer, int value, size_t count) {
  Writer out;
  out.put_address(pointer);
  out.put<std::int32_t>(value);
  out.put<std::uint64_t>(count);
  return runtime_call(Op::memset, out, "cudaMemset");
}

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t count, cudaStream_t stream) {
  Writer out;
  out.put_address(pointer);
  out.put<std::int32_t>(value);
  out.put<std::uint64_t>(count);
  out.put_address(stream);
  return runtime_call(Op::memset_async, out, "cudaMemsetAsync");
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  return runtime_call(Op::stream_create, Writer(), "cudaStreamCreate", [&](Reader& in) {
    *stream = in.get_address<cudaStream_t>();
  });
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return course::remote::quietly([&] {
    Writer out;
    out.put_address(stream);
    return runtime_call(Op::stream_destroy, out, "cudaStreamDestroy");
  });
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  // RankGroup's destructor waits for its streams: not a second exception while one unwinds.
  return course::remote::unwinding_safe([&] {
    Writer out;
    out.put_address(stream);
    return runtime_call(Op::stream_synchronize, out, "cudaStreamSynchronize");
  });
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  Writer out;
  out.put_address(stream);
  return runtime_call(Op::stream_query, out, "cudaStreamQuery");
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* pointer) {
  if (attributes == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put_address(pointer);
  return runtime_call(Op::pointer_attributes, out, "cudaPointerGetAttributes", [&](Reader& in) {
    *attributes = cudaPointerAttributes{};
    attributes->type = static_cast<cudaMemoryType>(in.get<std::int32_t>());
    attributes->device = in.get<std::int32_t>();
    attributes->devicePointer = in.get_address<void*>();  // the worker's addresses: passed on, never read
    attributes->hostPointer = in.get_address<void*>();
  });
}

cudaError_t cudaDeviceSynchronize() { return runtime_call(Op::synchronize, Writer(), "cudaDeviceSynchronize"); }
cudaError_t cudaDeviceReset() { return runtime_call(Op::device_reset, Writer(), "cudaDeviceReset"); }
cudaError_t cudaGetLastError() { return runtime_call(Op::get_last_error, Writer(), "cudaGetLastError"); }
cudaError_t cudaPeekAtLastError() { return runtime_call(Op::peek_last_error, Writer(), "cudaPeekAtLastError"); }
const char* cudaGetErrorName(cudaError_t error) { return course::remote::error_text(Op::error_name, error); }
const char* cudaGetErrorString(cudaError_t error) { return course::remote::error_text(Op::error_string, error); }

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  return course::remote::unwinding_safe([&] {  // DeviceGuard, in destructors too
    if (course::remote::lane_device() >= 0) {
      *device = course::remote::lane_device();
      return cudaSuccess;
    }
    const cudaError_t error = runtime_call(Op::get_device, Writer(), "cudaGetDevice",
                                           [&](Reader& in) { *device = in.get<std::int32_t>(); });
    if (error == cudaSuccess) course::remote::lane_device() = *device;
    return error;
  });
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (value == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::int32_t>(attribute);
  out.put<std::int32_t>(device);
  return runtime_call(Op::device_attribute, out, "cudaDeviceGetAttribute",
                      [&](Reader& in) { *value = in.get<std::int32_t>(); });
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int device) {
  if (properties == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::int32_t>(device);
  return runtime_call(Op::device_properties, out, "cudaGetDeviceProperties",
                      [&](Reader& in) { *properties = in.get<cudaDeviceProp>(); });
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (event == nullptr) return cudaErrorInvalidValue;
  return runtime_call(Op::event_create, Writer(), "cudaEventCreate", [&](Reader& in) {
    *event = in.get_address<cudaEvent_t>();
  });
}

static cudaError_t forward_event(Op op, cudaEvent_t event, const char* what) {
  Writer out;
  out.put_address(event);
  return runtime_call(op, out, what);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  Writer out;
  out.put_address(event);
  out.put_address(stream);
  return runtime_call(Op::event_record, out, "cudaEventRecord");
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) { return forward_event(Op::event_synchronize, event, "cudaEventSynchronize"); }
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return course::remote::quietly([&] { return forward_event(Op::event_destroy, event, "cudaEventDestroy"); });
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  if (ms == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put_address(start);
  out.put_address(stop);
  return runtime_call(Op::event_elapsed, out, "cudaEventElapsedTime", [&](Reader& in) { *ms = in.get<float>(); });
}

// ---- several devices (lesson 05's ranks.hpp) ------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
  return runtime_call(Op::get_device_count, Writer(), "cudaGetDeviceCount",
                      [&](Reader& in) { *count = in.get<std::int32_t>(); });
}

cudaError_t cudaSetDevice(int device) {
  return course::remote::unwinding_safe([&] {
    if (device >= 0 && device == course::remote::lane_device()) return cudaSuccess;
    Writer out;
    out.put<std::int32_t>(device);
    const cudaError_t error = runtime_call(Op::set_device, out, "cudaSetDevice");
    if (error == cudaSuccess) course::remote::lane_device() = device;
    return error;
  });
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::uint32_t>(flags);
  return runtime_call(Op::stream_create_with_flags, out, "cudaStreamCreateWithFlags",
                      [&](Reader& in) { *stream = in.get_address<cudaStream_t>(); });
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::uint32_t>(flags);
  return runtime_call(Op::event_create_with_flags, out, "cudaEventCreateWithFlags",
                      [&](Reader& in) { *event = in.get_address<cudaEvent_t>(); });
}

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer) {
  if (can_access == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::int32_t>(device);
  out.put<std::int32_t>(peer);
  return runtime_call(Op::device_can_access_peer, out, "cudaDeviceCanAccessPeer",
                      [&](Reader& in) { *can_access = in.get<std::int32_t>(); });
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags) {
  Writer out;
  out.put<std::int32_t>(peer);
  out.put<std::uint32_t>(flags);
  return runtime_call(Op::device_enable_peer_access, out, "cudaDeviceEnablePeerAccess");
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  Writer out;
  out.put_address(stream);
  out.put_address(event);
  out.put<std::uint32_t>(flags);
  return runtime_call(Op::stream_wait_event, out, "cudaStreamWaitEvent");
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                                cudaStream_t stream) {
  Writer out;
  out.put_address(dst);
  out.put<std::int32_t>(dst_device);
  out.put_address(src);
  out.put<std::int32_t>(src_device);
  out.put<std::uint64_t>(count);
  out.put_address(stream);
  return runtime_call(Op::memcpy_peer_async, out, "cudaMemcpyPeerAsync");
}


// ---- cuBLAS handles, for exercises that may call cuBLAS ------------------------------------------

template <class Read>
static cublasStatus_t cublas_call(Op op, const Writer& arguments, const char* what, Read read) {
  return course::remote::status_call<cublasStatus_t>(op, arguments, what, read);
}

cublasStatus_t cublasCreate(cublasHandle_t* blas) {
  if (blas == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return cublas_call(Op::cublas_create, Writer(), "cublasCreate", [&](Reader& in) {
    *blas = in.get_address<cublasHandle_t>();
  });
}

cublasStatus_t cublasDestroy(cublasHandle_t blas) {
  Writer out;
  out.put_address(blas);
  try {
    return cublas_call(Op::cublas_destroy, out, "cublasDestroy", [](Reader&) {});
  } catch (...) {
    return CUBLAS_STATUS_NOT_INITIALIZED;  // the worker has gone, and its handles with it
  }
}

cublasStatus_t cublasSetStream(cublasHandle_t blas, cudaStream_t stream) {
  Writer out;
  out.put_address(blas);
  out.put_address(stream);
  return cublas_call(Op::cublas_set_stream, out, "cublasSetStream", [](Reader&) {});
}

const char* cublasGetStatusName(cublasStatus_t status) {
  return course::remote::error_text(Op::cublas_status_name, static_cast<cudaError_t>(status));
}
const char* cublasGetStatusString(cublasStatus_t status) {
  return course::remote::error_text(Op::cublas_status_string, static_cast<cudaError_t>(status));
}
