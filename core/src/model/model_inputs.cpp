#include "model/model_inputs.h"

#include "model/model_setup.h"
#include "model/torchscript_loader.h"
#include "model/torchscript_model.h"

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace nanscope {

namespace {

constexpr int kSyntheticBatches = 4;

// The file's bytes unpickled (Python's torch.save, C++ torch::pickle_save), or a tensor written by
// C++ torch::save.
c10::IValue loadValue(const std::string &path, const std::string &what)
{
    const std::string file = what + " file '" + path + "'";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw std::invalid_argument("cannot read the " + file + ": no such file");
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.empty())
        throw std::invalid_argument("cannot read the " + file + ": the file is empty");
    std::string error;
    try {
        return torch::jit::pickle_load(bytes);
    } catch (const std::exception &e) {
        error = firstLine(e.what());
    }
    try {
        at::Tensor t;
        torch::load(t, path);
        return t;
    } catch (const std::exception &) {
    }
    throw std::invalid_argument("cannot read a tensor from the " + file + " (" + error + ")");
}

// Integers are ids or lengths and bools are masks: kept as they are; other tensors become float32.
at::Tensor asInput(const at::Tensor &t) { return at::isFloatingType(t.scalar_type()) ? t.to(at::kFloat) : t; }

at::Tensor synthetic(const std::vector<std::int64_t> &shape, const std::string &dtype, std::int64_t vocab,
                     const std::string &name)
{
    for (std::int64_t d : shape)
        if (d <= 0)
            throw std::invalid_argument("every dimension of the shape of input '" + name + "' must be positive");
    std::vector<std::int64_t> rows = shape;
    rows[0] *= kSyntheticBatches;
    if (dtype == "bool")
        return torch::zeros(rows, torch::kBool);
    if (dtype == "int64") {
        if (vocab <= 0)
            throw std::invalid_argument("synthetic ids for input '" + name +
                                        "' need a vocabulary size: the model has no nn.Embedding to read it from; "
                                        "give it (--vocab V)");
        return torch::randint(vocab, rows, torch::kLong);
    }
    return torch::randn(rows);
}

std::string nameOf(const TorchScriptModel &model, std::size_t i)
{
    return i < model.inputNames().size() ? model.inputNames()[i] : "#" + std::to_string(i + 1);
}

// "forward(x, mask)"
std::string signature(const TorchScriptModel &model)
{
    std::string s = "forward(";
    for (std::size_t i = 0; i < model.inputNames().size(); ++i)
        s += (i ? ", " : "") + model.inputNames()[i];
    return s + ")";
}

}  // namespace

ForwardInputs forwardInputs(const torch::jit::Module &module)
{
    ForwardInputs in;
    const auto forward = module.find_method("forward");
    if (!forward)
        return in;
    const auto &args = forward->function().getSchema().arguments();
    for (std::size_t i = 1; i < args.size(); ++i) {
        in.names.push_back(args[i].name());
        in.required += args[i].default_value() ? 0 : 1;
        in.defaults.push_back(args[i].default_value().value_or(c10::IValue()));
    }
    return in;
}

std::optional<FirstLayer> firstWeightedLayer(const torch::jit::Module &module)
{
    for (const auto &m : module.named_modules())
        for (const auto &p : m.value.named_parameters(/*recurse=*/false))
            if (p.name == "weight" && p.value.dim() >= 2) {
                const auto type = m.value.type()->name();
                return FirstLayer{m.name, type ? type->name() : std::string(), p.value};
            }
    return std::nullopt;
}

std::int64_t embeddingVocab(const torch::jit::Module &module)
{
    const auto first = firstWeightedLayer(module);
    return first && first->isEmbedding() ? first->weight.size(0) : 0;
}

at::Tensor loadTensorFile(const std::string &path, const std::string &what)
{
    const c10::IValue v = loadValue(path, what);
    if (!v.isTensor())
        throw std::invalid_argument("cannot read a tensor from the " + what + " file '" + path + "' (it holds a " +
                                    v.tagKind() + ", not a tensor)");
    return v.toTensor();
}

std::vector<at::Tensor> loadTensorsFile(const std::string &path, const std::string &what,
                                        const std::vector<std::string> &names)
{
    const c10::IValue v = loadValue(path, what);
    const std::string file = "the " + what + " file '" + path + "'";
    std::vector<at::Tensor> out;
    auto add = [&](const c10::IValue &e, const std::string &which) {
        if (!e.isTensor())
            throw std::invalid_argument(file + " holds a " + e.tagKind() + " as " + which + ", not a tensor");
        out.push_back(e.toTensor());
    };
    if (v.isTensor()) {
        out.push_back(v.toTensor());
    } else if (v.isTuple() || v.isList()) {
        const auto items = v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec();
        for (std::size_t i = 0; i < items.size(); ++i)
            add(items[i], "item " + std::to_string(i));
    } else if (v.isGenericDict()) {
        const c10::Dict<c10::IValue, c10::IValue> dict = v.toGenericDict();
        std::string keys;
        for (const auto &entry : dict)
            keys += (keys.empty() ? "" : ", ") + (entry.key().isString() ? entry.key().toStringRef() : "?");
        for (const std::string &name : names) {
            const auto hit = dict.find(c10::IValue(name));
            if (hit == dict.end())
                break;  // the rest keep their defaults, or the count check says what is missing
            add(hit->value(), "'" + name + "'");
        }
        if (out.empty())
            throw std::invalid_argument(file + " holds a dict whose keys (" + keys +
                                        ") name none of the forward's inputs");
    } else {
        throw std::invalid_argument("cannot read a tensor from the " + file + " (it holds a " + v.tagKind() + ")");
    }
    return out;
}

ModelInputs buildModelInputs(const RunConfig &config, TorchScriptModel &model)
{
    ModelInputs in;
    const std::int64_t vocab = config.vocab > 0 ? config.vocab : embeddingVocab(model.module());
    std::vector<at::Tensor> all;
    if (!config.inputsPath.empty()) {
        all = loadTensorsFile(config.inputsPath, "inputs", model.inputNames());
        for (std::size_t i = 0; i < config.sideInputs.size(); ++i) {
            const SideInput &side = config.sideInputs[i];
            if (side.path.empty())
                throw std::invalid_argument("input '" + nameOf(model, all.size()) +
                                            "' needs a file too (--inputs FILE), as the first one comes from a file");
            all.push_back(loadTensorFile(side.path, "input '" + nameOf(model, all.size()) + "'"));
        }
        for (at::Tensor &t : all)
            t = asInput(t);
        if (all[0].dim() == 0 || all[0].size(0) == 0)
            throw std::invalid_argument("the inputs file '" + config.inputsPath + "' holds no samples");
        in.batchSize =
            int(std::min<std::int64_t>(all[0].size(0), config.inputShape.empty() ? 32 : config.inputShape[0]));
    } else if (!config.inputShape.empty()) {
        all.push_back(synthetic(config.inputShape, config.tokenIds ? "int64" : "float32", vocab, nameOf(model, 0)));
        for (std::size_t i = 0; i < config.sideInputs.size(); ++i) {
            const SideInput &side = config.sideInputs[i];
            const std::string name = nameOf(model, i + 1);
            if (side.shape.empty() || side.shape[0] != config.inputShape[0])
                throw std::invalid_argument("input '" + name + "' needs a shape whose first size is the batch, " +
                                            std::to_string(config.inputShape[0]) + ", as the first input's");
            all.push_back(synthetic(side.shape, side.dtype, vocab, name));
        }
        in.batchSize = int(config.inputShape[0]);
    }
    const std::size_t given = all.size();
    if (given < model.requiredInputs() || given > model.inputNames().size())
        throw std::invalid_argument(
            "the model's " + signature(model) + " takes " + std::to_string(model.requiredInputs()) +
            (model.requiredInputs() < model.inputNames().size() ? " to " + std::to_string(model.inputNames().size())
                                                                : std::string()) +
            " inputs, given " + std::to_string(given) +
            ": give one --input-shape per input (8x4 or 8x4:bool), one --inputs file per "
            "input, or one file holding a tuple or a dict of them");
    for (std::size_t i = 1; i < all.size(); ++i)
        if (all[i].dim() == 0 || all[i].size(0) != all[0].size(0))
            throw std::invalid_argument("input '" + nameOf(model, i) + "' has shape " + shapeText(all[i].sizes()) +
                                        ": it needs one row per sample, " + std::to_string(all[0].size(0)) +
                                        ", as the first input");
    in.x = all[0];
    in.side.assign(all.begin() + 1, all.end());
    return in;
}

}  // namespace nanscope
