// mtbert::Dropout as a drop-in for torch::nn::Dropout: no parameters or
// buffers, the identity in eval mode, dropping in train mode, cloneable.
#include <torch/torch.h>

#include <sstream>

#include "core/internal_error.h"
#include "models/dropout.h"
#include "support/test_support.h"

TEST_CASE("Dropout holds nothing and is the identity in eval mode", "[models][dropout]") {
  mtbert::Dropout dropout(0.3);
  CHECK(dropout->parameters().empty());
  CHECK(dropout->buffers().empty());
  dropout->eval();
  auto x = torch::randn({8, 8});
  CHECK(dropout(x).is_same(x));
}

TEST_CASE("Dropout drops and rescales in train mode", "[models][dropout]") {
  torch::manual_seed(2);
  mtbert::Dropout dropout(0.5);
  dropout->train();
  auto x = torch::rand({100, 100}) + 0.5;
  auto out = dropout(x);
  auto kept = out != 0;
  const double fraction = kept.to(torch::kDouble).mean().item<double>();
  CHECK(fraction > 0.45);
  CHECK(fraction < 0.55);
  CHECK(torch::equal(out.masked_select(kept), x.masked_select(kept) * 2.0f));
}

TEST_CASE("Dropout clones, prints and checks p", "[models][dropout]") {
  mtbert::Dropout dropout(0.1);
  auto copy = std::dynamic_pointer_cast<mtbert::DropoutImpl>(dropout->clone());
  REQUIRE(copy);
  CHECK(copy->p() == 0.1);
  std::ostringstream printed;
  dropout->pretty_print(printed);
  CHECK(printed.str() == "mtbert::Dropout(p=0.1)");
  CHECK_THROWS_AS(mtbert::Dropout(1.5), mtbert::InternalError);
}
