// Preloaded into a process that crashes on the GPU machine, which has no gdb
// (scripts/gpu/check.sh): on SIGSEGV prints the faulting address, the program
// counter and the words at the top of the stack, each as library + offset and
// symbol where dladdr knows one, then glibc's backtrace. A jump through a bad
// function pointer leaves a program counter that no unwinder can walk from;
// the caller's return address is then among the first stack words.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <ucontext.h>
#include <unistd.h>

static void show(const char* what, void* p) {
  Dl_info info;
  if (dladdr(p, &info) && info.dli_fname)
    fprintf(stderr, "fault_trace: %s %p %s(+%#lx) %s\n", what, p, info.dli_fname,
            (unsigned long)((char*)p - (char*)info.dli_fbase), info.dli_sname ? info.dli_sname : "");
}

static void on_fault(int sig, siginfo_t* si, void* context) {
  ucontext_t* uc = (ucontext_t*)context;
  void* pc = (void*)uc->uc_mcontext.gregs[REG_RIP];
  void** sp = (void**)uc->uc_mcontext.gregs[REG_RSP];
  fprintf(stderr, "fault_trace: signal %d at address %p, pc %p\n", sig, si->si_addr, pc);
  show("pc", pc);
  for (int k = 0; k < 32; ++k) show("stack", sp[k]);
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
  _exit(128 + sig);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction action = {0};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &action, 0);
}
