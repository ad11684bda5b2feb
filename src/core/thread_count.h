#pragma once
// How many threads a process computes with. One setting reaches every pool
// that does arithmetic: LibTorch's intra-op threads and the BLAS library's
// own. Debian's LibTorch calls its GEMMs through libblas.so.3, which with
// libopenblas0-pthread is OpenBLAS with a pthread pool of its own that
// at::set_num_threads does not touch; left alone it starts one thread per
// core (or OMP_NUM_THREADS), so a "one-thread" rank would still split its
// GEMMs, oversubscribe the machine and sum in another order than a rank that
// torchrun started with OMP_NUM_THREADS=1.

#include <cstdint>

namespace mtbert {

// The cores this process may run on (its CPU affinity), at least 1.
int available_cores();

// The most threads a process here computes with: limits::kThreadsPerCore
// per available core.
int max_thread_count();

// Sets LibTorch's intra-op threads and the BLAS library's threads to
// `threads`; `threads <= 0` means one per available core (Debian's LibTorch
// otherwise starts with a single thread). More than max_thread_count() (a
// config written for a larger machine) is that many, with a warning. Returns
// the count now in effect.
int set_thread_count(int64_t threads);

// The BLAS library's own thread count where one with a settable pool is
// loaded (OpenBLAS, BLIS); -1 where none is (MKL follows at::set_num_threads
// itself, the reference BLAS has no threads).
int blas_thread_count();

}  // namespace mtbert
