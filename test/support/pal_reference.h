#pragma once
// Hand-written PAL computations from a module's weights with plain tensor
// operations (no mtbert module code), for the PAL tests.
#include <cmath>

#include <torch/torch.h>

namespace mtbert::test {

inline torch::Tensor affine(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return torch::matmul(x, w.t()) + b;
}

// Multi-head attention of x [B, N, D] given q/k/v weights, with padding mask
// [B, N] (1 = token): every head separately, in double loops over heads.
inline torch::Tensor reference_attention(const torch::Tensor& x, const torch::Tensor& mask, int64_t heads,
                                         const torch::Tensor& wq, const torch::Tensor& bq, const torch::Tensor& wk,
                                         const torch::Tensor& bk, const torch::Tensor& wv, const torch::Tensor& bv) {
  const int64_t d = x.size(2), hd = d / heads;
  auto q = affine(x, wq, bq), k = affine(x, wk, bk), v = affine(x, wv, bv);
  std::vector<torch::Tensor> outs;
  for (int64_t h = 0; h < heads; ++h) {
    auto qh = q.narrow(2, h * hd, hd), kh = k.narrow(2, h * hd, hd), vh = v.narrow(2, h * hd, hd);
    auto scores = torch::bmm(qh, kh.transpose(1, 2)) / std::sqrt(static_cast<double>(hd));
    scores = scores.masked_fill(mask.unsqueeze(1) == 0, -1e30);
    outs.push_back(torch::bmm(torch::softmax(scores, -1), vh));
  }
  return torch::cat(outs, 2);
}

inline double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

inline torch::Tensor reference_gelu(const torch::Tensor& x) { return 0.5 * x * (1.0 + torch::erf(x / std::sqrt(2.0))); }

}  // namespace mtbert::test
