#pragma once
// Deleting a file or a whole directory tree, as
// std::filesystem::remove_all(path, ec) does, with POSIX nftw.
//
// Why not remove_all: pip's LibTorch (2.5 on) exports the std::filesystem
// functions it links statically from its own libstdc++ (pytorch/pytorch
// issue 133437), and an executable's calls bind to those definitions, which
// the dynamic linker finds before libstdc++.so's. On the H100 image (pip
// torch 2.11) remove_all jumped through a null pointer there: every
// checkpoint write crashed.
#include <filesystem>
#include <system_error>

namespace mtbert {

// Removes `path` and, for a directory, everything under it (symbolic links
// are removed, not followed). A missing path is no error; otherwise `ec`
// holds the first failure's errno and the walk stops there.
void remove_tree(const std::filesystem::path& path, std::error_code& ec);

}  // namespace mtbert
