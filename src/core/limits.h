#pragma once
// Upper bounds on what an input may ask of mtbert. Each is far above any real
// use and far below what would exhaust this machine's memory, threads or
// time, so that a mistake (or a hostile file) is one line naming the key, not
// an allocation failure, a hang or a crash. In one place, so that the errors,
// the tests and the table of docs/faults-and-limits.md cite the same numbers.
#include <cstddef>
#include <cstdint>

namespace mtbert::limits {

// Files read whole.
inline constexpr std::uint64_t kConfigFileBytes = 4ull << 20;        // a YAML experiment, overlay, sweep or table
inline constexpr std::uint64_t kJsonFileBytes = 64ull << 20;         // config.json, state.json, summary.json, ...
inline constexpr std::uint64_t kSafetensorsHeaderBytes = 100'000'000;  // the safetensors format's own limit
inline constexpr std::uint64_t kTokenizerFileBytes = 256ull << 20;   // vocab.txt, spm.model
inline constexpr std::uint64_t kTaskFileBytes = 4ull << 30;          // a task split held in memory whole
inline constexpr std::uint64_t kTensorFileBytes = 8ull << 30;        // a torch.save file (mtbert encode --input)
inline constexpr std::size_t kTextRecordBytes = 1u << 20;            // one data row, corpus line or stdin line

// Nesting and expansion.
inline constexpr int kJsonDepth = 64;
inline constexpr int kConfigDepth = 32;
inline constexpr std::int64_t kConfigValues = 100'000;  // values of one YAML document, aliases expanded
inline constexpr int kExtendsFiles = 64;                // distinct files in one experiment's extends: tree
inline constexpr std::int64_t kSweepRuns = 1000;

// Processes.
inline constexpr int kThreadsPerCore = 4;           // --threads and threads: against this machine
inline constexpr std::int64_t kConfigThreads = 1024;  // threads: in a config, on any machine
inline constexpr int kRanks = 1 << 20;                // WORLD_SIZE from a launcher

// Model sizes.
inline constexpr std::int64_t kVocabSize = 1 << 22;
inline constexpr std::int64_t kHiddenSize = 1 << 16;
inline constexpr std::int64_t kIntermediateSize = 1 << 18;
inline constexpr std::int64_t kLayers = 1024;
inline constexpr std::int64_t kAttentionHeads = 1024;
inline constexpr std::int64_t kPositions = 1 << 16;  // positions, relative positions, buckets, max_length
inline constexpr std::int64_t kTypeVocab = 1024;
inline constexpr std::int64_t kModelParameters = 1ll << 36;

// Training sizes.
inline constexpr std::int64_t kBatchSize = 1 << 16;
inline constexpr std::int64_t kStepsPerEpoch = 100'000'000;  // an epoch's plan is held in memory
inline constexpr std::int64_t kEpochs = 1'000'000;
inline constexpr std::int64_t kSteps = 1'000'000'000'000;  // max_steps, warmup, evaluation intervals
inline constexpr std::int64_t kTimeoutSeconds = 7 * 24 * 3600;

}  // namespace mtbert::limits
