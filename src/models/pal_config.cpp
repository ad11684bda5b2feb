#include "models/pal_config.h"

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

void validate_pal_config(const PalConfig& config, const std::string& where) {
  if (config.kind == PalKind::none) return;
  if (config.rank < 1) throw UserError(fmt::format("{}.rank must be >= 1, got {}", where, config.rank));
  if (config.heads < 1) throw UserError(fmt::format("{}.heads must be >= 1, got {}", where, config.heads));
  if (config.rank % config.heads != 0)
    throw UserError(fmt::format("{}: rank {} is not a multiple of heads {} (each head gets rank / heads features)",
                                where, config.rank, config.heads));
}

}  // namespace mtbert
