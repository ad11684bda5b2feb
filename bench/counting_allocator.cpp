#include "counting_allocator.h"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <c10/core/CPUAllocator.h>

namespace mtbert::bench {

namespace {

// LibTorch's raw_allocate needs the DataPtr's context to be the data pointer
// itself, so the bookkeeping lives in a table keyed by that pointer.
struct Block {
  int64_t bytes;
  c10::DeleterFnPtr inner_deleter;
};

std::mutex& table_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::unordered_map<void*, Block>& table() {
  static auto* blocks = new std::unordered_map<void*, Block>();
  return *blocks;
}

CountingAllocator* the_allocator = nullptr;

}  // namespace

CountingAllocator& CountingAllocator::install() {
  static CountingAllocator* allocator = [] {
    the_allocator = new CountingAllocator(c10::GetCPUAllocator());
    return the_allocator;
  }();
  c10::SetCPUAllocator(allocator, /*priority=*/100);
  return *allocator;
}

c10::DataPtr CountingAllocator::allocate(size_t bytes) MTBERT_ALLOCATE_CONST {
  c10::DataPtr inner = inner_->allocate(bytes);
  void* data = inner.get();
  if (data == nullptr) return inner;
  // The default CPU allocator's context is the pointer itself (freed by its deleter).
  TORCH_CHECK(inner.get_context() == data, "CountingAllocator wraps allocators whose context is the data pointer");
  const c10::DeleterFnPtr deleter = inner.get_deleter();
  inner.release_context();
  {
    std::lock_guard<std::mutex> lock(table_mutex());
    table()[data] = Block{static_cast<int64_t>(bytes), deleter};
  }
  add(static_cast<int64_t>(bytes));
  return {data, data, &CountingAllocator::release, c10::Device(c10::DeviceType::CPU)};
}

void CountingAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  std::memcpy(dest, src, count);
}

void CountingAllocator::add(int64_t bytes) const {
  const int64_t now = live_.fetch_add(bytes) + bytes;
  int64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

void CountingAllocator::release(void* data) {
  Block block;
  {
    std::lock_guard<std::mutex> lock(table_mutex());
    auto it = table().find(data);
    if (it == table().end()) return;
    block = it->second;
    table().erase(it);
  }
  the_allocator->live_.fetch_sub(block.bytes);
  block.inner_deleter(data);
}

}  // namespace mtbert::bench
