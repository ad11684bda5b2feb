#pragma once
// Projected Attention Layers (Stickland & Murray 2019, "BERT and PALs"): which
// variant, and its sizes. See parallel_pals.h and top_pal.h.
#include <cstdint>
#include <string>

namespace mtbert {

enum class PalKind {
  none,
  // A PAL beside every encoder layer, added before the layer's output
  // LayerNorm (the paper's main method).
  parallel,
  // One task-specific low-rank transformer block on top of the shared encoder
  // (the paper's "low-rank layer on top").
  top,
};

struct PalConfig {
  PalKind kind = PalKind::none;
  int64_t rank = 204;  // the projected width (204 in the paper for BERT-base; 132 for "top")
  int64_t heads = 6;   // attention heads in the projected space (rank must be a multiple)
};

// Throws UserError naming `where` for a rank or head count that cannot work.
void validate_pal_config(const PalConfig& config, const std::string& where);

}  // namespace mtbert
