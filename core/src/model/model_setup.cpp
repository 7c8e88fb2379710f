#include "model/model_setup.h"
#include "nanscope/inspect.h"

#include "model/model_inputs.h"
#include "model/model_output.h"
#include "model/torchscript_loader.h"
#include "model/torchscript_model.h"

#include <torch/torch.h>

#include <chrono>
#include <sstream>

namespace nanscope {

namespace {

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

// Token ids [batch, seq] in and scores over the vocabulary out: the model learns the next token.
// [batch, seq, vocab]: each position's next token, the last position has none and is ignored
// (cross-entropy's ignore_index, -100). [batch, vocab]: the model reads all but the last token of
// each sequence and learns that one. Scores over another set of classes (a text classifier)
// get no such targets.
bool learnsNextToken(const at::Tensor &x, const at::Tensor &out, std::int64_t vocab)
{
    if (at::isFloatingType(x.scalar_type()) || x.scalar_type() == at::kBool || x.dim() != 2 || x.size(1) < 2)
        return false;
    const std::int64_t classes = out.size(-1);
    if (vocab > 0 ? classes != vocab : x.max().item<std::int64_t>() >= classes)
        return false;
    return (out.dim() == 3 && out.size(1) == x.size(1)) || out.dim() == 2;
}

void setNextTokenTargets(Dataset &data, const at::Tensor &out)
{
    const at::Tensor x = data.x;
    const std::int64_t seq = x.size(1);
    if (out.dim() == 2) {
        data.x = x.narrow(1, 0, seq - 1).contiguous();
        data.y = x.select(1, seq - 1).contiguous();
        return;
    }
    data.y = torch::full(x.sizes(), -100, torch::kLong);
    data.y.narrow(1, 0, seq - 1).copy_(x.narrow(1, 1, seq - 1));
}

// What the first weighted layer says about the input it takes.
std::string expectedInput(TorchScriptModel &model)
{
    const auto first = firstWeightedLayer(model.module());
    if (!first)
        return {};
    if (first->isEmbedding())
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
    if (module.find_method("forward")) {
        const ForwardInputs inputs = forwardInputs(module);
        g.inputNames = inputs.names;
        g.requiredInputs = inputs.required;
    }
    const auto first = firstWeightedLayer(module);
    if (!first) {
        g.note = "the model has no linear or convolution layer to tell its input from";
        return g;
    }
    const at::Tensor &w = first->weight;
    const std::string layer = "'" + first->path + "' (" + first->type + ")";
    if (first->isEmbedding()) {
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
        throw std::invalid_argument("the loss is cross-entropy, mse or model, got '" + name + "'");
    return name == "mse" ? LossKind::Mse : name == "model" ? LossKind::ModelOwn : LossKind::CrossEntropy;
}

at::Tensor outputForInput(TorchScriptModel &model, const at::Tensor &x, const std::vector<at::Tensor> &side,
                          const std::string &selector)
{
    at::NoGradGuard noGrad;
    model.setTraining(false);
    c10::IValue raw;
    try {
        raw = model.rawForward(x, side);
        model.setTraining(true);
    } catch (const std::exception &e) {
        model.setTraining(true);
        const std::string expected = expectedInput(model);
        throw std::invalid_argument("the model rejected an input of shape " + shapeText(x.sizes()) +
                                    (expected.empty() ? std::string() : " (" + expected + ")") + ": " +
                                    causeOf(e.what()));
    }
    return selectOutput(raw, selector);
}

RunSetup buildModelSetup(const RunConfig &config, const Dataset *given)
{
    torch::manual_seed(config.seed);
    RunSetup s;
    s.loss = parseLoss(config.loss);
    s.optimizer = OptimizerKind::AdamW;
    const auto t0 = std::chrono::steady_clock::now();
    torch::jit::Module module = loadTorchScript(config.modelPath);
    const auto t1 = std::chrono::steady_clock::now();
    for (const NonFiniteState &bad : scanNonFiniteState(module))
        s.loadWarnings.push_back(describeNonFiniteState(bad));
    if (module.parameters().size() == 0)
        throw std::invalid_argument("the model has no parameters: there is nothing to train");
    auto model = std::make_unique<TorchScriptModel>(std::move(module));
    s.loadMillis = std::chrono::duration<double, std::milli>(t1 - t0).count();
    s.instrumentMillis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    model->setOutputSelector(config.output);
    if (given) {
        s.data = *given;
        s.batchSize = int(given->x.size(0));
        s.model = std::move(model);
        return s;
    }
    if (config.inputsPath.empty() && config.inputShape.empty()) {
        const InputGuess g = guessInputShape(config.modelPath);
        throw std::invalid_argument(
            "a model needs an input shape (such as 8x3x64x64) or a file of inputs" +
            (g.shape.empty() ? std::string() : "; try the shape " + shapeText(g.shape) + " (" + g.note + ")"));
    }
    ModelInputs inputs = buildModelInputs(config, *model);
    s.data.x = inputs.x;
    s.data.side = inputs.side;
    s.batchSize = config.batchSize > 0 ? config.batchSize : inputs.batchSize;
    const std::int64_t samples = s.data.x.size(0);
    const std::int64_t first = std::min<std::int64_t>(samples, s.batchSize);
    std::vector<at::Tensor> firstSide;
    for (const at::Tensor &t : s.data.side)
        firstSide.push_back(t.narrow(0, 0, first));
    const at::Tensor out = outputForInput(*model, s.data.x.narrow(0, 0, first), firstSide, config.output);
    const std::int64_t vocab = config.vocab > 0 ? config.vocab : embeddingVocab(model->module());
    if (s.loss == LossKind::ModelOwn) {
        if (out.numel() != 1 || !at::isFloatingType(out.scalar_type()))
            throw std::invalid_argument(
                "the loss 'model' trains on a scalar the model computes itself; its output is " +
                shapeText(out.sizes()) +
                " (name another with --output, or use cross-entropy "
                "or mse)");
        s.data.y = torch::zeros({samples});  // unused: the model's output is the loss
    } else if (out.dim() == 0) {
        throw std::invalid_argument("the model returns a scalar: if it is the model's own loss, train it with the "
                                    "loss 'model' (--loss model)");
    } else if (s.loss == LossKind::CrossEntropy && out.dim() < 2) {
        throw std::invalid_argument("the model's output has shape " + shapeText(out.sizes()) +
                                    ": cross-entropy needs [batch, ..., classes]; use the mse loss");
    } else if (!config.targetsPath.empty()) {
        s.data.y = loadTensorFile(config.targetsPath, "targets");
        checkTargets(s.loss, out, s.data.y, samples);
        if (s.loss == LossKind::Mse)
            s.data.y = s.data.y.to(at::kFloat);
    } else if (s.loss == LossKind::CrossEntropy && learnsNextToken(s.data.x, out, vocab)) {
        setNextTokenTargets(s.data, out);
    } else {
        s.data.y = syntheticTargets(s.loss, out, samples);
    }
    s.model = std::move(model);
    return s;
}

}  // namespace nanscope
