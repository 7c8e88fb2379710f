#include "model/model_setup.h"
#include "nanscope/inspect.h"

#include "model/torchscript_loader.h"
#include "model/torchscript_model.h"

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

namespace nanscope {

namespace {

constexpr int kSyntheticBatches = 4;

// The sentence of a TorchScript interpreter error ("RuntimeError: mat1 and mat2 shapes ..."),
// without the TorchScript traceback around it.
std::string causeOf(const std::string &error)
{
    std::istringstream in(error);
    std::string line, cause;
    while (std::getline(in, line)) {
        const auto at = line.find("Error: ");
        if (at != std::string::npos && line.find("Exception raised from") == std::string::npos)
            cause = line.substr(at + 7);
    }
    return cause.empty() ? firstLine(error) : cause;
}

// The first module (in named_modules() order) with a matrix or convolution weight: what it takes
// is what the model takes, for the usual models whose first layer reads the input.
struct FirstLayer {
    std::string path, type;
    at::Tensor weight;
};

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

bool isEmbedding(const FirstLayer &layer) { return layer.type.find("Embedding") != std::string::npos; }

// The vocabulary of a model that starts with an nn.Embedding: its num_embeddings.
std::int64_t embeddingVocab(const torch::jit::Module &module)
{
    const auto first = firstWeightedLayer(module);
    return first && isEmbedding(*first) ? first->weight.size(0) : 0;
}

// Token ids in, [batch, seq, vocab] out: each position learns the next token; the last
// position has none and is ignored (cross-entropy's ignore_index, -100).
std::optional<at::Tensor> nextTokenTargets(const at::Tensor &x, const at::Tensor &out)
{
    if (at::isFloatingType(x.scalar_type()) || x.dim() != 2 || out.dim() != 3 || out.size(1) != x.size(1))
        return std::nullopt;
    at::Tensor y = torch::full(x.sizes(), -100, torch::kLong);
    if (x.size(1) > 1)
        y.narrow(1, 0, x.size(1) - 1).copy_(x.narrow(1, 1, x.size(1) - 1));
    return y;
}

// What the first weighted layer says about the input it takes.
std::string expectedInput(TorchScriptModel &model)
{
    const auto first = firstWeightedLayer(model.module());
    if (!first)
        return {};
    if (isEmbedding(*first))
        return "it starts with the embedding '" + first->path + "', which takes integer token ids below " +
               std::to_string(first->weight.size(0));
    const at::Tensor &w = first->weight;
    std::ostringstream s;
    if (w.dim() == 2)
        s << "its first weighted layer '" << first->path << "' takes inputs whose last dimension is " << w.size(1);
    else
        s << "its first weighted layer '" << first->path << "' takes inputs [batch, " << w.size(1) << ", ...] with "
          << (w.dim() - 2) << " spatial dimension" << (w.dim() > 3 ? "s" : "");
    return s.str();
}

at::Tensor syntheticTargets(LossKind loss, const at::Tensor &out, std::int64_t samples)
{
    std::vector<std::int64_t> shape = out.sizes().vec();
    shape[0] = samples;
    if (loss == LossKind::Mse)
        return torch::randn(shape);
    const std::int64_t classes = shape.back();
    shape.pop_back();
    return torch::randint(classes, shape, torch::kLong);
}

void checkTargets(LossKind loss, const at::Tensor &out, const at::Tensor &y, std::int64_t samples)
{
    std::vector<std::int64_t> want = out.sizes().vec();
    want[0] = samples;
    if (loss == LossKind::CrossEntropy) {
        const std::int64_t classes = want.back();
        want.pop_back();
        if (at::isFloatingType(y.scalar_type()) || y.sizes().vec() != want)
            throw std::invalid_argument(
                "cross-entropy needs integer class indices of shape " + shapeText(want) + " (the output " +
                shapeText(out.sizes()) + " without its last dimension), the targets file holds " +
                std::string(y.scalar_type() == at::kLong ? "" : "non-integer ") + "shape " + shapeText(y.sizes()));
        if (y.numel() > 0 && (y.min().item<std::int64_t>() < 0 || y.max().item<std::int64_t>() >= classes))
            throw std::invalid_argument("class indices must lie in [0, " + std::to_string(classes) +
                                        ") for an output with " + std::to_string(classes) + " classes");
    } else if (y.sizes().vec() != want) {
        throw std::invalid_argument("mse needs targets of the output's shape " + shapeText(want) +
                                    ", the targets file holds " + shapeText(y.sizes()));
    }
}

}  // namespace

InputGuess guessInputShape(const std::string &modelPath)
{
    const torch::jit::Module module = loadTorchScript(modelPath);
    InputGuess g;
    const auto first = firstWeightedLayer(module);
    if (!first) {
        g.note = "the model has no linear or convolution layer to tell its input from";
        return g;
    }
    const at::Tensor &w = first->weight;
    const std::string layer = "'" + first->path + "' (" + first->type + ")";
    if (isEmbedding(*first)) {
        g.shape = {8, 32};
        g.tokenIds = true;
        g.vocab = w.size(0);
        g.note = "the first weighted layer " + layer + " reads token ids below " + std::to_string(w.size(0)) +
                 "; the batch and the sequence length are guesses";
        return g;
    }
    const std::int64_t batch = 8;
    g.shape = {batch, w.size(1)};
    if (w.dim() == 2) {
        g.note = "from the first weighted layer " + layer + ", which takes " + std::to_string(w.size(1)) + " features";
        return g;
    }
    const int spatial = int(w.dim()) - 2;
    const std::int64_t side = spatial == 1 ? 128 : spatial == 2 ? 64 : 16;
    for (int i = 0; i < spatial; ++i)
        g.shape.push_back(side);
    g.note = "from the first weighted layer " + layer + ", which takes " + std::to_string(w.size(1)) +
             " channels; the batch and the spatial size are guesses";
    return g;
}

std::string shapeText(at::IntArrayRef shape)
{
    std::string s;
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? "x" : "") + std::to_string(shape[i]);
    return s.empty() ? std::string("a scalar") : s;
}

LossKind parseLoss(const std::string &name)
{
    if (!isKnownLoss(name))
        throw std::invalid_argument("the loss is cross-entropy or mse, got '" + name + "'");
    return name == "mse" ? LossKind::Mse : LossKind::CrossEntropy;
}

at::Tensor loadTensorFile(const std::string &path, const std::string &what)
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
    try {  // Python's torch.save (and C++ torch::pickle_save)
        const c10::IValue v = torch::jit::pickle_load(bytes);
        if (v.isTensor())
            return v.toTensor();
        error = std::string("it holds a ") + v.tagKind() + ", not a tensor";
    } catch (const std::exception &e) {
        error = firstLine(e.what());
    }
    try {  // C++ torch::save
        at::Tensor t;
        torch::load(t, path);
        return t;
    } catch (const std::exception &) {
    }
    throw std::invalid_argument("cannot read a tensor from the " + file + " (" + error + ")");
}

at::Tensor outputForInput(TorchScriptModel &model, const at::Tensor &x)
{
    at::NoGradGuard noGrad;
    model.setTraining(false);
    try {
        at::Tensor out = model.forward(x, nullptr);
        model.setTraining(true);
        return out;
    } catch (const std::exception &e) {
        model.setTraining(true);
        const std::string expected = expectedInput(model);
        throw std::invalid_argument("the model rejected an input of shape " + shapeText(x.sizes()) +
                                    (expected.empty() ? std::string() : " (" + expected + ")") + ": " +
                                    causeOf(e.what()));
    }
}

ScenarioSetup buildModelSetup(const RunConfig &config)
{
    torch::manual_seed(config.seed);
    ScenarioSetup s;
    s.loss = parseLoss(config.loss);
    s.optimizer = OptimizerKind::AdamW;
    const auto t0 = std::chrono::steady_clock::now();
    torch::jit::Module module = loadTorchScript(config.modelPath);
    const auto t1 = std::chrono::steady_clock::now();
    for (const NonFiniteState &bad : scanNonFiniteState(module))
        s.loadWarnings.push_back(describeNonFiniteState(bad));
    auto model = std::make_unique<TorchScriptModel>(std::move(module));
    s.loadMillis = std::chrono::duration<double, std::milli>(t1 - t0).count();
    s.instrumentMillis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    if (!config.inputsPath.empty()) {
        s.data.x = loadTensorFile(config.inputsPath, "inputs");
        if (at::isFloatingType(s.data.x.scalar_type()) || s.data.x.scalar_type() == at::kBool)
            s.data.x = s.data.x.to(at::kFloat);  // integers are token ids: kept as they are
        if (s.data.x.dim() == 0 || s.data.x.size(0) == 0)
            throw std::invalid_argument("the inputs file '" + config.inputsPath + "' holds no samples");
        s.batchSize =
            int(std::min<std::int64_t>(s.data.x.size(0), config.inputShape.empty() ? 32 : config.inputShape[0]));
    } else if (!config.inputShape.empty()) {
        for (std::int64_t d : config.inputShape)
            if (d <= 0)
                throw std::invalid_argument("every dimension of the input shape must be positive");
        std::vector<std::int64_t> shape = config.inputShape;
        s.batchSize = int(shape[0]);
        shape[0] *= kSyntheticBatches;
        if (config.tokenIds) {
            const std::int64_t vocab = config.vocab > 0 ? config.vocab : embeddingVocab(model->module());
            if (vocab <= 0)
                throw std::invalid_argument("synthetic token ids need a vocabulary size: the model has no nn.Embedding "
                                            "to read it from; give it (--vocab V)");
            s.data.x = torch::randint(vocab, shape, torch::kLong);
        } else {
            s.data.x = torch::randn(shape);
        }
    } else {
        const InputGuess g = guessInputShape(config.modelPath);
        throw std::invalid_argument(
            "a model needs an input shape (such as 8x3x64x64) or a file of inputs" +
            (g.shape.empty() ? std::string() : "; try the shape " + shapeText(g.shape) + " (" + g.note + ")"));
    }
    if (config.batchSize > 0)
        s.batchSize = config.batchSize;
    const std::int64_t samples = s.data.x.size(0);
    const at::Tensor out = outputForInput(*model, s.data.x.narrow(0, 0, std::min<std::int64_t>(samples, s.batchSize)));
    if (s.loss == LossKind::CrossEntropy && out.dim() < 2)
        throw std::invalid_argument("the model's output has shape " + shapeText(out.sizes()) +
                                    ": cross-entropy needs [batch, ..., classes]; use the mse loss");
    if (!config.targetsPath.empty()) {
        s.data.y = loadTensorFile(config.targetsPath, "targets");
        checkTargets(s.loss, out, s.data.y, samples);
        if (s.loss == LossKind::Mse)
            s.data.y = s.data.y.to(at::kFloat);
    } else if (const auto next = s.loss == LossKind::CrossEntropy ? nextTokenTargets(s.data.x, out) : std::nullopt) {
        s.data.y = *next;
    } else {
        s.data.y = syntheticTargets(s.loss, out, samples);
    }
    s.model = std::move(model);
    return s;
}

}  // namespace nanscope
