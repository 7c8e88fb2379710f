#pragma once
// Which NaNScope this is, and which LibTorch it was built with, as run files, capsules and
// `nanscope --version` say them.
namespace nanscope {

const char *nanscopeVersion();  // the project's version, "0.1.0"
const char *libtorchVersion();  // "1.13.1"; "unknown" in a build without LibTorch (the fuzz target)

}  // namespace nanscope
