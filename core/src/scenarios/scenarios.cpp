// The reference scenarios of docs/scenarios.md. Each one sets up a model, data and loss in
// which LibTorch really computes the failure; nothing here scripts a result.
#include "scenarios/scenarios.h"

#include "model/model_setup.h"
#include "nanscope/scenario.h"

#include <c10/util/Optional.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace nanscope {

namespace {

// exp() underflows to exactly 0 in float for logit gaps beyond ~104: softmax then holds zeros.
struct RowL2NormImpl : torch::nn::Module {
    // sqrt(sum x^2) written out, as users do: its gradient at an all-zero row is 0 * Inf.
    at::Tensor forward(const at::Tensor &x) { return torch::sqrt((x * x).sum(1, /*keepdim=*/true)); }
};
TORCH_MODULE(RowL2Norm);

// softmax written out from its definition, as tutorials first show it: exp overflows past 88.7.
struct NaiveSoftmaxImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x)
    {
        const at::Tensor e = torch::exp(x);
        return e / e.sum(1, /*keepdim=*/true);
    }
};
TORCH_MODULE(NaiveSoftmax);

// Scores normalised to weights that sum to 1 by dividing by their sum: a row of zeros is 0/0.
struct SumNormalizeImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x) { return x / x.sum(1, /*keepdim=*/true); }
};
TORCH_MODULE(SumNormalize);

// A learned per-feature input scale (x * weight + bias), the affine part of an input normalisation.
struct FeatureScaleImpl : torch::nn::Module {
    explicit FeatureScaleImpl(int64_t features)
        : weight(register_parameter("weight", torch::ones({features}))),
          bias(register_parameter("bias", torch::zeros({features})))
    {
    }
    at::Tensor forward(const at::Tensor &x) { return x * weight + bias; }
    at::Tensor weight, bias;
};
TORCH_MODULE(FeatureScale);

// The "stabiliser" many tutorials recommend: every NaN and +-Inf replaced by 0. Its gradient is 0
// where its input was not finite, and 0 times that NaN input is NaN in the weight gradient upstream.
struct NanToZeroImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x) { return torch::nan_to_num(x, 0.0, 0.0, 0.0); }
};
TORCH_MODULE(NanToZero);

}  // namespace

Dataset randomClassification(int samples, int features, int classes)
{
    return {torch::randn({samples, features}), torch::randint(classes, {samples}, torch::kLong)};
}

std::unique_ptr<ObservedSequential> stableModel(double bnEps)
{
    namespace nn = torch::nn;
    auto m = std::make_unique<ObservedSequential>("StableModel");
    m->add("fc1", nn::AnyModule(nn::Linear(100, 64)));
    m->add("bn1", nn::AnyModule(nn::BatchNorm1d(nn::BatchNormOptions(64).eps(bnEps))));
    m->add("relu1", nn::AnyModule(nn::ReLU()));
    m->add("drop1", nn::AnyModule(nn::Dropout(0.3)));
    m->add("fc2", nn::AnyModule(nn::Linear(64, 64)));
    m->add("bn2", nn::AnyModule(nn::BatchNorm1d(nn::BatchNormOptions(64).eps(bnEps))));
    m->add("relu2", nn::AnyModule(nn::ReLU()));
    m->add("drop2", nn::AnyModule(nn::Dropout(0.3)));
    m->add("fc3", nn::AnyModule(nn::Linear(64, 10)));
    m->finalize();
    return m;
}

namespace {

namespace nn = torch::nn;

// Each builder makes the scenario's model and fills in its data, loss and optimizer; the seed is
// set before it runs. A builder throws std::invalid_argument for options it cannot honour.
using ScenarioBuilder = std::unique_ptr<ObservedSequential> (*)(const RunConfig &, RunSetup &);

std::unique_ptr<ObservedSequential> largeLrCe(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("Linear");
    m->add("fc", nn::AnyModule(nn::Linear(100, 10)));
    s.data = randomClassification(500, 100, 10);
    return m;
}

std::unique_ptr<ObservedSequential> largeLrMse(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("MLP");
    m->add("fc1", nn::AnyModule(nn::Linear(100, 32)));
    m->add("relu", nn::AnyModule(nn::ReLU()));
    m->add("fc2", nn::AnyModule(nn::Linear(32, 1)));
    const at::Tensor x = torch::randn({500, 100});
    const at::Tensor w = torch::randn({100, 1}) * 0.1;
    s.data = {x, x.matmul(w) + 0.1 * torch::randn({500, 1})};
    s.loss = LossKind::Mse;
    return m;
}

// nan-input and safe-training share the poisoned data: one teaches the failure, one the recovery.
std::unique_ptr<ObservedSequential> poisonedData(const RunConfig &, RunSetup &s)
{
    auto m = stableModel();
    s.data = randomClassification(500, 100, 10);
    s.data.x[10][5] = NAN;
    s.data.x[50][20] = INFINITY;
    s.optimizer = OptimizerKind::AdamW;
    return m;
}

std::unique_ptr<ObservedSequential> logZero(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("SoftmaxClassifier");
    nn::Linear fc(100, 10);
    {
        torch::NoGradGuard noGrad;
        fc->weight.normal_(0.0, 20.0);  // logits ~ N(0, 200): gaps far past exp's range
    }
    m->add("fc", nn::AnyModule(fc));
    m->add("softmax", nn::AnyModule(nn::Softmax(1)));
    s.data = randomClassification(500, 100, 10);
    s.loss = LossKind::NegLogOfProbabilities;
    return m;
}

std::unique_ptr<ObservedSequential> bnConstant(const RunConfig &config, RunSetup &s)
{
    const double eps = config.bnEps.value_or(0.0);
    if (eps < 0)
        throw std::invalid_argument("BatchNorm eps must be >= 0");
    auto m = std::make_unique<ObservedSequential>("BNClassifier");
    // momentum=None: running statistics are the plain average over the calibration batches.
    nn::BatchNorm1d bn(nn::BatchNormOptions(100).eps(eps).momentum(c10::nullopt));
    m->add("bn", nn::AnyModule(bn));
    m->add("fc", nn::AnyModule(nn::Linear(100, 10)));
    s.data = randomClassification(500, 100, 10);
    s.data.x.select(1, 0).fill_(3.0);  // a feature that never varies (a stuck sensor, say)
    // Calibrate the statistics in training mode (a batch of one fails here, as in LibTorch),
    // then fine-tune with the BatchNorm frozen in eval mode, the usual recipe.
    const int batch = config.batchSize > 0 ? config.batchSize : s.batchSize;
    torch::NoGradGuard noGrad;
    bn->train();
    for (int64_t i = 0; i + batch <= s.data.x.size(0); i += batch)
        bn->forward(s.data.x.slice(0, i, i + batch));
    m->freeze("bn");
    return m;
}

std::unique_ptr<ObservedSequential> sqrtBackward(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("NormRegressor");
    m->add("fc", nn::AnyModule(nn::Linear(nn::LinearOptions(100, 16).bias(false))));
    m->add("relu", nn::AnyModule(nn::ReLU()));
    m->add("norm", nn::AnyModule(RowL2Norm()));
    m->add("head", nn::AnyModule(nn::Linear(1, 1)));
    at::Tensor x = torch::randn({500, 100});
    x.slice(0, 0, 500, 8).zero_();  // zero-padded samples: every 8th row is all zeros
    s.data = {x, torch::randn({500, 1})};
    s.loss = LossKind::Mse;
    return m;
}

// Raw pixel intensities (0..255, never normalised) into a hand-written softmax: logits of a few
// hundred, exp() = Inf, Inf / Inf = NaN inside the softmax.
std::unique_ptr<ObservedSequential> softmaxOverflow(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("PixelClassifier");
    m->add("fc", nn::AnyModule(nn::Linear(100, 10)));
    m->add("softmax", nn::AnyModule(NaiveSoftmax()));
    // A braced list is evaluated left to right: the pixels are drawn before the labels.
    s.data = {torch::floor(torch::rand({500, 100}) * 256.0), torch::randint(10, {500}, torch::kLong)};
    s.loss = LossKind::NegLogOfProbabilities;
    return m;
}

// Attention-like pooling weights: four ReLU scores divided by their sum. A sample none of whose
// scores is positive (one in 16 at the start) divides 0 by 0.
std::unique_ptr<ObservedSequential> zeroDivision(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("ScoreNormalizer");
    m->add("score", nn::AnyModule(nn::Linear(100, 4)));
    m->add("relu", nn::AnyModule(nn::ReLU()));
    m->add("normalize", nn::AnyModule(SumNormalize()));
    m->add("head", nn::AnyModule(nn::Linear(4, 10)));
    s.data = randomClassification(500, 100, 10);
    return m;
}

// A regression over 16 sensors, six of which drop out once each (NaN or +-Inf in one sample), fed
// to a model that sanitises after its input scaling and on its output. The loss never leaves the
// finite range; each bad sample turns its sensor's scale weight into NaN for good (0 * NaN in the
// weight gradient), and from then on that sensor reaches the model as 0: the model loses its inputs
// one by one while the loss curve only creeps up.
std::unique_ptr<ObservedSequential> hiddenByNanToNum(const RunConfig &, RunSetup &s)
{
    constexpr int64_t kFeatures = 16;
    auto m = std::make_unique<ObservedSequential>("SanitizedRegressor");
    m->add("scale", nn::AnyModule(FeatureScale(kFeatures)));
    m->add("sanitize_in", nn::AnyModule(NanToZero()));
    m->add("fc1", nn::AnyModule(nn::Linear(kFeatures, 32)));
    m->add("relu", nn::AnyModule(nn::ReLU()));
    m->add("fc2", nn::AnyModule(nn::Linear(32, 1)));
    m->add("sanitize_out", nn::AnyModule(NanToZero()));
    at::Tensor x = torch::randn({1600, kFeatures});
    const at::Tensor w = torch::randn({kFeatures, 1});
    const at::Tensor y = x.matmul(w) + 0.1 * torch::randn({1600, 1});
    // Sample -> the sensor that dropped out in it (the labels were recorded before the fault).
    const std::pair<int64_t, double> dropouts[] = {{100, NAN},  {400, INFINITY},  {700, NAN},
                                                   {1000, -INFINITY}, {1300, NAN}, {1550, INFINITY}};
    int64_t sensor = 0;
    for (const auto &[sample, value] : dropouts)
        x[sample][sensor++] = value;
    s.data = {x, y};
    s.loss = LossKind::Mse;
    return m;
}

// A price regression whose targets were left in dollars (about 1e5): the MLP's output has to
// grow past fp16's largest value, 65504, to fit them.
std::unique_ptr<ObservedSequential> fp16Overflow(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("PriceMLP");
    m->add("fc1", nn::AnyModule(nn::Linear(16, 64)));
    m->add("relu1", nn::AnyModule(nn::ReLU()));
    m->add("fc2", nn::AnyModule(nn::Linear(64, 64)));
    m->add("relu2", nn::AnyModule(nn::ReLU()));
    m->add("head", nn::AnyModule(nn::Linear(64, 1)));
    const at::Tensor x = torch::randn({500, 16});
    const at::Tensor w = torch::randn({16, 1}) / 4.0;
    s.data = {x, 1e5 + 3e4 * x.matmul(w)};
    s.loss = LossKind::Mse;
    s.optimizer = OptimizerKind::AdamW;
    return m;
}

std::unique_ptr<ObservedSequential> explodingDeep(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("DeepMLP");
    for (int i = 0; i < 30; ++i) {
        nn::Linear fc(i == 0 ? 100 : 64, 64);
        {
            torch::NoGradGuard noGrad;
            fc->weight.normal_(0.0, 4.0);  // ~20x the He init: each layer multiplies by ~20
        }
        m->add("fc" + std::to_string(i + 1), nn::AnyModule(fc));
        m->add("relu" + std::to_string(i + 1), nn::AnyModule(nn::ReLU()));
    }
    m->add("head", nn::AnyModule(nn::Linear(64, 10)));
    s.data = randomClassification(500, 100, 10);
    return m;
}

// The builder of each scenario of the catalogue (contract/scenario_catalogue.cpp), by id: adding a
// scenario is one entry there, one here, its lesson (resources/lessons/) and its test.
const std::pair<const char *, ScenarioBuilder> kBuilders[] = {
    {"large-lr-ce", largeLrCe},       {"large-lr-mse", largeLrMse},     {"nan-input", poisonedData},
    {"log-zero", logZero},            {"bn-constant", bnConstant},      {"sqrt-backward", sqrtBackward},
    {"exploding-deep", explodingDeep}, {"safe-training", poisonedData}, {"fp16-overflow", fp16Overflow},
    {"softmax-overflow", softmaxOverflow}, {"zero-division", zeroDivision},
    {"hidden-by-nan-to-num", hiddenByNanToNum},
};

ScenarioBuilder builderOf(const std::string &id)
{
    for (const auto &[name, build] : kBuilders)
        if (id == name)
            return build;
    return nullptr;
}

}  // namespace

RunSetup buildRunSetup(const RunConfig &config, const Dataset *given)
{
    if (config.usesModelFile())
        return buildModelSetup(config, given);
    const ScenarioBuilder build = builderOf(config.scenario);
    if (!build)
        throw std::invalid_argument("unknown scenario '" + config.scenario + "'");
    torch::manual_seed(config.seed);
    RunSetup s;
    std::unique_ptr<ObservedSequential> m = build(config, s);
    if (m->layers().empty())
        m->finalize();
    s.model = std::move(m);
    if (config.batchSize > 0)
        s.batchSize = config.batchSize;
    return s;
}

}  // namespace nanscope
