// The translation unit that builds the precompiled torch/torch.h every mtbert
// library reuses (CMakeLists.txt: mtbert_pch).
