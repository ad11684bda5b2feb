#pragma once
// Measures the CPU memory a computation allocates: while installed, every CPU
// tensor allocation goes through this wrapper of LibTorch's default
// allocator, which keeps the bytes live now and their peak.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include <c10/core/Allocator.h>
#include "core/torch_compat.h"

namespace mtbert::bench {

class CountingAllocator final : public c10::Allocator {
 public:
  // Installs itself as the CPU allocator (until the process ends: tensors it
  // allocated must find their deleter).
  static CountingAllocator& install();

  c10::DataPtr allocate(size_t bytes) MTBERT_ALLOCATE_CONST override;
  // A plain copy (the interface asks for it since LibTorch 2.3).
  void copy_data(void* dest, const void* src, std::size_t count) const;
  c10::DeleterFnPtr raw_deleter() const override { return &CountingAllocator::release; }

  int64_t live() const { return live_.load(); }
  // Starts a measurement: the peak restarts from what is live now.
  void reset_peak() { peak_.store(live_.load()); }
  int64_t peak() const { return peak_.load(); }

 private:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  void add(int64_t bytes) const;
  static void release(void* context);

  c10::Allocator* inner_;
  mutable std::atomic<int64_t> live_{0};
  mutable std::atomic<int64_t> peak_{0};
};

}  // namespace mtbert::bench
