#include "model/torchscript_loader.h"

#include "health/tensor_health.h"

#include <torch/csrc/jit/serialization/import.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace nanscope {

namespace {

bool contains(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }

// The first bytes of the file: a zip archive (what torch.jit.save writes) starts with "PK\3\4".
bool startsLikeZip(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    return in.gcount() == 4 && std::memcmp(magic, "PK\x03\x04", 4) == 0;
}

std::string explain(const std::string &path, const std::string &error)
{
    const std::string file = "'" + path + "'";
    if (contains(error, "Attempted to read a PyTorch file with version")) {
        // "... with version 12, but the maximum supported version for reading is 10 ..."
        std::string detail = firstLine(error);
        const auto at = detail.find("Attempted to read");
        if (at != std::string::npos)
            detail = detail.substr(at);
        return "cannot load " + file + ": it was written by a newer PyTorch than this LibTorch can read (" + detail +
               "); save it again with an older PyTorch or use a newer LibTorch";
    }
    if (contains(error, "failed finding central directory") || contains(error, "failed reading zip archive")) {
        if (startsLikeZip(path))
            return "cannot load " + file + ": the archive is truncated or corrupt (its zip directory is missing)";
        return "cannot load " + file +
               ": not a TorchScript file (TorchScript files are zip archives written by "
               "torch.jit.save)";
    }
    if (contains(error, "constants.pkl") || contains(error, "file not found"))
        return "cannot load " + file +
               ": the archive holds no TorchScript code (was it written by torch.save "
               "instead of torch.jit.save?)";
    if (contains(error, "PytorchStreamReader failed") || contains(error, "CRC") || contains(error, "zip"))
        return "cannot load " + file + ": the archive is corrupt (" + firstLine(error) + ")";
    return "cannot load " + file + ": " + firstLine(error);
}

}  // namespace

std::string firstLine(const std::string &message)
{
    std::string s = message;
    const auto nl = s.find('\n');
    if (nl != std::string::npos)
        s.resize(nl);
    const auto raised = s.find("Exception raised from");
    if (raised != std::string::npos)
        s.resize(raised);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r'))
        s.pop_back();
    return s;
}

torch::jit::Module loadTorchScript(const std::string &path, const std::string &device)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status))
        throw ModelFileError("cannot load '" + path + "': no such file");
    if (fs::is_directory(status))
        throw ModelFileError("cannot load '" + path + "': it is a directory, not a TorchScript file");
    if (fs::file_size(path, ec) == 0 && !ec)
        throw ModelFileError("cannot load '" + path + "': the file is empty");
    if (!std::ifstream(path, std::ios::binary))
        throw ModelFileError("cannot load '" + path + "': the file cannot be opened (permissions?)");
    try {
        // Archive errors are c10::Error, TorchScript parse errors std::runtime_error.
        return torch::jit::load(path, c10::Device(device));
    } catch (const c10::Error &e) {
        throw ModelFileError(explain(path, e.what_without_backtrace()));
    } catch (const std::exception &e) {
        throw ModelFileError(explain(path, e.what()));
    }
}

std::string describeNonFiniteState(const NonFiniteState &state)
{
    const TensorHealth &h = state.health;
    return std::string(state.buffer ? "buffer " : "parameter ") + state.name + " holds " + std::to_string(h.nan) +
           " NaN, " + std::to_string(h.posInf) + " +Inf, " + std::to_string(h.negInf) + " -Inf of " +
           std::to_string(h.numel) + " values as loaded";
}

std::vector<NonFiniteState> scanNonFiniteState(const torch::jit::Module &module)
{
    std::vector<NonFiniteState> out;
    const auto scan = [&out](const std::string &name, const at::Tensor &t, bool buffer) {
        if (!t.defined() || !at::isFloatingType(t.scalar_type()) || allFinite(t))
            return;
        out.push_back({name, buffer, computeHealth(t)});
    };
    for (const auto &p : module.named_parameters(/*recurse=*/true))
        scan(p.name, p.value, false);
    for (const auto &b : module.named_buffers(/*recurse=*/true))
        scan(b.name, b.value, true);
    return out;
}

}  // namespace nanscope
