#include "models/dropout.h"

#include <c10/util/Exception.h>

#include "core/internal_error.h"
#include "ops/fused_dropout.h"

namespace mtbert {

DropoutImpl::DropoutImpl(double p) : p_(p) {
  check_invariant(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got {}", p);
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) { return ops::fused_dropout(x, p_, is_training()); }

void DropoutImpl::pretty_print(std::ostream& stream) const { stream << "mtbert::Dropout(p=" << p_ << ")"; }

}  // namespace mtbert
