// The reference scenarios of docs/scenarios.md. Each one sets up a model, data and loss in
// which LibTorch really computes the failure; nothing here scripts a result.
#include "scenarios/scenarios.h"

#include "scenarios/scenario_modules.h"

#include "model/model_setup.h"
#include "nanscope/scenario.h"

#include <c10/util/Optional.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <stdexcept>

namespace nanscope {

using namespace scenario_modules;

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
    FlooredSoftmax softmax;
    m->add("softmax", nn::AnyModule(softmax));
    s.data = randomClassification(500, 100, 10);
    s.loss = LossKind::NegLogOfProbabilities;
    s.applyFix = [softmax](std::optional<double> eps) mutable {
        softmax->floor = eps;
        return LossKind::NegLogOfProbabilities;
    };
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
    s.applyFix = [bn, eps](std::optional<double> fixedEps) mutable {
        bn->options.eps(fixedEps.value_or(eps));  // read by every forward
        return LossKind::CrossEntropy;
    };
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
    RowL2Norm norm;
    m->add("norm", nn::AnyModule(norm));
    m->add("head", nn::AnyModule(nn::Linear(1, 1)));
    s.applyFix = [norm](std::optional<double> eps) mutable {
        norm->eps = eps;
        return LossKind::Mse;
    };
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
    NaiveSoftmax softmax;
    m->add("softmax", nn::AnyModule(softmax));
    // A braced list is evaluated left to right: the pixels are drawn before the labels.
    s.data = {torch::floor(torch::rand({500, 100}) * 256.0), torch::randint(10, {500}, torch::kLong)};
    s.loss = LossKind::NegLogOfProbabilities;
    s.applyFix = [softmax](std::optional<double> on) mutable {
        softmax->stable = on.has_value();
        return on ? LossKind::NegLogOfLogProbabilities : LossKind::NegLogOfProbabilities;
    };
    return m;
}

// Attention-like pooling weights: four ReLU scores divided by their sum. A sample none of whose
// scores is positive (one in 16 at the start) divides 0 by 0.
std::unique_ptr<ObservedSequential> zeroDivision(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("ScoreNormalizer");
    m->add("score", nn::AnyModule(nn::Linear(100, 4)));
    m->add("relu", nn::AnyModule(nn::ReLU()));
    SumNormalize normalize;
    m->add("normalize", nn::AnyModule(normalize));
    s.applyFix = [normalize](std::optional<double> eps) mutable {
        normalize->eps = eps;
        return LossKind::CrossEntropy;
    };
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
    const std::pair<int64_t, double> dropouts[] = {{100, NAN},        {400, INFINITY}, {700, NAN},
                                                   {1000, -INFINITY}, {1300, NAN},     {1550, INFINITY}};
    int64_t sensor = 0;
    for (const auto &[sample, value] : dropouts)
        x[sample][sensor++] = value;
    s.data = {x, y};
    s.loss = LossKind::Mse;
    return m;
}

// Heteroscedastic regression: the model predicts a mean and a variance per sample and trains on
// the Gaussian negative log-likelihood. The variance starts near 1; the samples with little noise
// pull it down each step, by a gradient that grows like 1 / variance, until one update jumps past 0.
std::unique_ptr<ObservedSequential> negativeVariance(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("GaussianRegressor");
    m->add("body", nn::AnyModule(nn::Linear(8, 32)));
    m->add("relu", nn::AnyModule(nn::ReLU()));
    nn::Linear head(32, 2);
    {
        torch::NoGradGuard noGrad;
        head->bias[1] = 1.0;  // a variance of about 1 to start with
    }
    m->add("head", nn::AnyModule(head));
    GaussianHead gaussian;
    m->add("gaussian", nn::AnyModule(gaussian));
    const at::Tensor x = torch::randn({500, 8});
    const at::Tensor noise = 0.02 + 0.5 * x.select(1, 0).abs().unsqueeze(1);
    s.data = {x, x.matmul(torch::randn({8, 1}) * 0.5) + noise * torch::randn({500, 1})};
    s.loss = LossKind::GaussianNll;
    s.applyFix = [gaussian](std::optional<double> on) mutable {
        gaussian->positiveVariance = on.has_value();
        return LossKind::GaussianNll;
    };
    return m;
}

// Sessions of a web shop: duration, clicks and six other features, classified into 4 kinds. A
// handful of sessions ended without a click; the first batch that draws one divides by 0.
std::unique_ptr<ObservedSequential> zeroDenominator(const RunConfig &, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("SessionClassifier");
    PerClickFeature features;
    m->add("features", nn::AnyModule(features));
    m->add("fc1", nn::AnyModule(nn::Linear(7, 16)));
    m->add("relu", nn::AnyModule(nn::ReLU()));
    m->add("fc2", nn::AnyModule(nn::Linear(16, 4)));
    at::Tensor x = torch::randn({500, 8});
    x.select(1, 0).copy_(torch::rand({500}) * 60.0 + 5.0);                // seconds, 5 to 65
    x.select(1, 1).copy_(torch::randint(1, 6, {500}).to(torch::kFloat));  // 1 to 5 clicks
    for (const int64_t sample : {137, 288, 421})
        x[sample][1] = 0.0;  // sessions that ended without a click
    s.data = {x, torch::randint(4, {500}, torch::kLong)};
    s.applyFix = [features](std::optional<double> on) mutable {
        features->atLeastOne = on.has_value();
        return LossKind::CrossEntropy;
    };
    return m;
}

// A price regression whose targets were left in dollars (about 1e5): the MLP's output has to
// grow past fp16's largest value, 65504, to fit them.
std::unique_ptr<ObservedSequential> fp16Overflow(const RunConfig &config, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("PriceMLP");
    m->add("fc1", nn::AnyModule(nn::Linear(16, 64)));
    m->add("relu1", nn::AnyModule(nn::ReLU()));
    m->add("fc2", nn::AnyModule(nn::Linear(64, 64)));
    m->add("relu2", nn::AnyModule(nn::ReLU()));
    m->add("head", nn::AnyModule(nn::Linear(64, 1)));
    const at::Tensor x = torch::randn({500, 16});
    const at::Tensor w = torch::randn({16, 1}) / 4.0;
    at::Tensor prices = 1e5 + 3e4 * x.matmul(w);
    if (initialControls(config).fix)  // the fix: targets in standard units, as a data pipeline should give
        prices = (prices - prices.mean()) / prices.std();
    s.data = {x, prices};
    s.loss = LossKind::Mse;
    s.optimizer = OptimizerKind::AdamW;
    return m;
}

std::unique_ptr<ObservedSequential> explodingDeep(const RunConfig &config, RunSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("DeepMLP");
    const bool heInit = initialControls(config).fix.has_value();  // the fix
    for (int i = 0; i < 30; ++i) {
        const int64_t fanIn = i == 0 ? 100 : 64;
        nn::Linear fc(fanIn, 64);
        {
            torch::NoGradGuard noGrad;
            // 4 is ~20x the He init: each layer multiplies by ~20.
            fc->weight.normal_(0.0, heInit ? std::sqrt(2.0 / double(fanIn)) : 4.0);
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
    {"large-lr-ce", largeLrCe},
    {"large-lr-mse", largeLrMse},
    {"nan-input", poisonedData},
    {"log-zero", logZero},
    {"bn-constant", bnConstant},
    {"sqrt-backward", sqrtBackward},
    {"exploding-deep", explodingDeep},
    {"safe-training", poisonedData},
    {"fp16-overflow", fp16Overflow},
    {"softmax-overflow", softmaxOverflow},
    {"zero-division", zeroDivision},
    {"hidden-by-nan-to-num", hiddenByNanToNum},
    {"negative-variance", negativeVariance},
    {"zero-denominator", zeroDenominator},
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
