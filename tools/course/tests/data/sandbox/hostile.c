/* What hostile test programs have done to the grader, one behaviour per first argument
   (compiled at test time by test_sandbox.py). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t raw_fork(void) {
#ifdef SYS_fork
  return (pid_t)syscall(SYS_fork);   /* what a submission used to dodge fork() wrappers */
#else
  return fork();
#endif
}

static void print_limit(const char* name, int resource) {
  struct rlimit r;
  getrlimit(resource, &r);
  if (r.rlim_cur == RLIM_INFINITY) printf("%s=unlimited\n", name);
  else printf("%s=%llu\n", name, (unsigned long long)r.rlim_cur);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "exit")) return atoi(argv[2]);
  if (!strcmp(mode, "segv")) raise(SIGSEGV);
  if (!strcmp(mode, "abort")) abort();
  if (!strcmp(mode, "survivor")) {          /* survivor MARKER TOKEN */
    if (raw_fork() == 0) {
      setsid();
      if (raw_fork() == 0) {
        sleep(2);
        int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) { if (write(fd, "alive\n", 6) < 0) {} close(fd); }
        _exit(0);
      }
      sleep(3);
      _exit(0);
    }
    printf("started\n");
    return 0;
  }
  if (!strcmp(mode, "killparent")) {
    kill(getppid(), SIGKILL);
    sleep(1);
    printf("survived\n");
    return 0;
  }
  if (!strcmp(mode, "stop")) { raise(SIGSTOP); printf("resumed\n"); return 0; }
  if (!strcmp(mode, "read")) {
    char buf[256] = {0};
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0) { printf("cannot read\n"); return 0; }
    ssize_t n = read(fd, buf, sizeof buf - 1);
    printf("read:%s\n", n > 0 ? buf : "");
    return 0;
  }
  if (!strcmp(mode, "write")) {
    int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
    printf(fd >= 0 ? "wrote\n" : "cannot write\n");
    return 0;
  }
  if (!strcmp(mode, "fd")) {
    char buf[256] = {0};
    ssize_t n = read(atoi(argv[2]), buf, sizeof buf - 1);
    printf("secret:%s\n", n > 0 ? buf : "(none)");
    return 0;
  }
  if (!strcmp(mode, "limits")) {
    print_limit("cpu", RLIMIT_CPU);
    print_limit("fsize", RLIMIT_FSIZE);
    print_limit("nofile", RLIMIT_NOFILE);
    print_limit("data", RLIMIT_DATA);
    print_limit("core", RLIMIT_CORE);
    print_limit("nproc", RLIMIT_NPROC);
    return 0;
  }
  fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
