#include "core/thread_count.h"

#include <ATen/Parallel.h>

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/limits.h"

namespace mtbert {

namespace {

// The BLAS library is whatever libblas.so.3 resolves to on this machine
// (Debian's alternatives), so its thread controls are looked up at run time
// in the libraries already loaded, not linked.
template <typename Function>
Function loaded_function(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_DEFAULT, name));
}

void set_blas_threads(int threads) {
  if (auto openblas = loaded_function<void (*)(int)>("openblas_set_num_threads")) openblas(threads);
  if (auto blis = loaded_function<void (*)(long)>("bli_thread_set_num_threads")) blis(threads);
}

}  // namespace

int available_cores() {
  cpu_set_t set;
  int cores = 0;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) cores = CPU_COUNT(&set);
  if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
  return cores > 0 ? cores : 1;
}

int max_thread_count() { return limits::kThreadsPerCore * available_cores(); }

int set_thread_count(int64_t requested) {
  int threads = requested <= 0 ? available_cores() : static_cast<int>(std::min<int64_t>(requested, max_thread_count()));
  if (requested > threads)
    spdlog::warn("{} threads asked for, on {} cores: using {} ({} per core at most)", requested, available_cores(),
                 threads, limits::kThreadsPerCore);
  at::set_num_threads(threads);
  set_blas_threads(threads);
  return at::get_num_threads();
}

int blas_thread_count() {
  if (auto openblas = loaded_function<int (*)()>("openblas_get_num_threads")) return openblas();
  if (auto blis = loaded_function<long (*)()>("bli_thread_get_num_threads")) return static_cast<int>(blis());
  return -1;
}

}  // namespace mtbert
