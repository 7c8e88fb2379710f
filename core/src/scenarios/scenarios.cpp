// The reference scenarios of docs/scenarios.md. Each one sets up a model, data and loss in
// which LibTorch really computes the failure; nothing here scripts a result.
#include "scenarios/scenario_setup.h"

#include "model/model_setup.h"
#include "nanscope/scenario.h"

#include <c10/util/Optional.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace nanscope {

namespace {

Controls makeControls(double lr, std::optional<double> clip = {}, RecoveryPolicy policy = {},
                      Precision precision = Precision::FP32)
{
    Controls c;
    c.learningRate = lr;
    c.clipNorm = clip;
    c.recovery = policy;
    c.precision = precision;
    return c;
}

// exp() underflows to exactly 0 in float for logit gaps beyond ~104: softmax then holds zeros.
struct RowL2NormImpl : torch::nn::Module {
    // sqrt(sum x^2) written out, as users do: its gradient at an all-zero row is 0 * Inf.
    at::Tensor forward(const at::Tensor &x) { return torch::sqrt((x * x).sum(1, /*keepdim=*/true)); }
};
TORCH_MODULE(RowL2Norm);

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
using ScenarioBuilder = std::unique_ptr<ObservedSequential> (*)(const RunConfig &, ScenarioSetup &);

std::unique_ptr<ObservedSequential> largeLrCe(const RunConfig &, ScenarioSetup &s)
{
    auto m = std::make_unique<ObservedSequential>("Linear");
    m->add("fc", nn::AnyModule(nn::Linear(100, 10)));
    s.data = randomClassification(500, 100, 10);
    return m;
}

std::unique_ptr<ObservedSequential> largeLrMse(const RunConfig &, ScenarioSetup &s)
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
std::unique_ptr<ObservedSequential> poisonedData(const RunConfig &, ScenarioSetup &s)
{
    auto m = stableModel();
    s.data = randomClassification(500, 100, 10);
    s.data.x[10][5] = NAN;
    s.data.x[50][20] = INFINITY;
    s.optimizer = OptimizerKind::AdamW;
    return m;
}

std::unique_ptr<ObservedSequential> logZero(const RunConfig &, ScenarioSetup &s)
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

std::unique_ptr<ObservedSequential> bnConstant(const RunConfig &config, ScenarioSetup &s)
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

std::unique_ptr<ObservedSequential> sqrtBackward(const RunConfig &, ScenarioSetup &s)
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

// A price regression whose targets were left in dollars (about 1e5): the MLP's output has to
// grow past fp16's largest value, 65504, to fit them.
std::unique_ptr<ObservedSequential> fp16Overflow(const RunConfig &, ScenarioSetup &s)
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

std::unique_ptr<ObservedSequential> explodingDeep(const RunConfig &, ScenarioSetup &s)
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

struct ScenarioEntry {
    ScenarioInfo info;
    ScenarioBuilder build;
};

// The registry: adding a scenario is one entry here, its lesson (resources/lessons/) and its test.
const std::vector<ScenarioEntry> &registry()
{
    static const std::vector<ScenarioEntry> table = {
        {{"large-lr-ce", "Huge learning rate with cross-entropy: the loss oscillates but stays finite",
          makeControls(100.0), 200},
         largeLrCe},
        {{"large-lr-mse", "Learning rate above 2/curvature on an MSE regression: divergence to Inf, then NaN",
          makeControls(1.0), 100},
         largeLrMse},
        {{"nan-input", "A NaN and an Inf in the training data poison BatchNorm and then every weight",
          makeControls(1e-3), 60},
         poisonedData},
        {{"log-zero", "log() of softmax probabilities that underflowed to exactly 0", makeControls(0.1), 30}, logZero},
        {{"bn-constant", "BatchNorm with eps=0 over a feature that is constant across the batch: 0/0",
          makeControls(0.1), 30},
         bnConstant},
        {{"sqrt-backward", "sqrt at exactly 0: a finite forward pass, NaN born in backward", makeControls(0.01), 30},
         sqrtBackward},
        {{"exploding-deep", "30-layer ReLU MLP with a too-large init: activations overflow deep in the net",
          makeControls(1e-3), 10},
         explodingDeep},
        {{"safe-training", "The nan-input data trained with the full recovery policy: quarantine, clip, roll back",
          makeControls(1e-3, 5.0, RecoveryPolicy::full()), 200},
         poisonedData},
        {{"fp16-overflow",
          "Prices in dollars as fp16 regression targets: the loss scaler backs off, then outputs pass 65504",
          makeControls(0.05, {}, {}, Precision::FP16), 100},
         fp16Overflow},
    };
    return table;
}

const ScenarioEntry *findEntry(const std::string &id)
{
    for (const ScenarioEntry &e : registry())
        if (e.info.id == id)
            return &e;
    return nullptr;
}

}  // namespace

const std::vector<ScenarioInfo> &scenarios()
{
    static const std::vector<ScenarioInfo> list = [] {
        std::vector<ScenarioInfo> infos;
        for (const ScenarioEntry &e : registry())
            infos.push_back(e.info);
        return infos;
    }();
    return list;
}

const ScenarioInfo *findScenario(const std::string &id)
{
    const ScenarioEntry *e = findEntry(id);
    return e ? &e->info : nullptr;
}

ScenarioSetup buildScenario(const RunConfig &config, const Dataset *given)
{
    if (config.usesModelFile())
        return buildModelSetup(config, given);
    const ScenarioEntry *entry = findEntry(config.scenario);
    if (!entry)
        throw std::invalid_argument("unknown scenario '" + config.scenario + "'");
    torch::manual_seed(config.seed);
    ScenarioSetup s;
    std::unique_ptr<ObservedSequential> m = entry->build(config, s);
    if (m->layers().empty())
        m->finalize();
    s.model = std::move(m);
    if (config.batchSize > 0)
        s.batchSize = config.batchSize;
    return s;
}

at::Tensor computeLoss(LossKind kind, const at::Tensor &output, const at::Tensor &target)
{
    namespace F = torch::nn::functional;
    switch (kind) {
    case LossKind::CrossEntropy:
        if (output.dim() > 2)  // [batch, ..., classes]: classes along the last dimension
            return F::cross_entropy(output.reshape({-1, output.size(-1)}), target.reshape({-1}));
        return F::cross_entropy(output, target);
    case LossKind::Mse: return F::mse_loss(output, target);
    case LossKind::NegLogOfProbabilities: {
        // -(t * log p) with one-hot t, as written by hand: 0 * log(0) = 0 * -Inf = NaN.
        const at::Tensor oneHot = F::one_hot(target, output.size(1)).to(output.scalar_type());
        return -(oneHot * torch::log(output)).sum(1).mean();
    }
    case LossKind::ModelOwn: return output.reshape({});
    }
    throw std::logic_error("unknown loss");
}

}  // namespace nanscope
