#pragma once

// Marks a loop kernel to be compiled three times, for AVX-512 and AVX2 CPUs
// next to the portable one, and chosen when the program loads (GCC's function
// multiversioning). Elsewhere it marks nothing.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define MTBERT_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MTBERT_VECTOR_CLONES
#endif
