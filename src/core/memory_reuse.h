#pragma once
// Keeps the memory a process frees for its own reuse.
//
// LibTorch's CPU allocator is plain malloc/free. glibc serves every block
// above its mmap threshold (at most 32 MiB) with a fresh mmap and unmaps it on
// free, and trims the top of the heap back to the system: so a training step,
// which frees and reallocates the same activations, gradients and optimizer
// temporaries every time, page-faults every page of them back in, zeroed by
// the kernel. Measured on a 4-layer, 256-wide encoder (BENCHMARKS.md): about
// 7,000 page faults and a sizeable share of each step's time. With mmap off
// and trimming off, freed blocks go back to the heap and the next step reuses
// them. The cost: the process keeps its peak heap until it exits, which a
// training run reaches in its first step anyway.
namespace mtbert {

// Call early in main(), before large allocations (glibc's mallopt; a no-op
// elsewhere). Returns whether the settings took effect.
bool keep_freed_memory_for_reuse();

}  // namespace mtbert
