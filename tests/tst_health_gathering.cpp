// How the per-layer map gathers health besides scanning each tensor on the host: the device
// path (statistics staged and reduced together, read once a step) run on the CPU, and the scans
// the host reuses or derives (a ReLU's output, a Flatten, the batch). Each must give what a scan
// of every tensor gives.
#include "health/health_collector.h"
#include "probe/observed_sequential.h"
#include "probed_pass.h"
#include "health/tensor_health.h"

#include <torch/torch.h>

#include <QtTest>

#include "health_compare.h"

#include <cmath>

using namespace nanscope;

class TestHealthGathering : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void deviceStatsMatchHostScan();
    void deviceStatsOfEmptyAndAllNonFinite();
    void collectorDevicePathMatchesHostScan();
    void reluHealthFollowsFromItsInput_data();
    void reluHealthFollowsFromItsInput();
    void reusedScansMatchScanningEveryTensor();
    void poolAndFlattenGradientsFollowFromTheirOutputs_data();
    void poolAndFlattenGradientsFollowFromTheirOutputs();
    void derivedHealthIsNotReadAgain_data();
    void derivedHealthIsNotReadAgain();
};

namespace {

// Forward: a copy. Backward: the gradient with a NaN, a +Inf and a -Inf written into it.
struct PoisonGradient : torch::autograd::Function<PoisonGradient> {
    static at::Tensor forward(torch::autograd::AutogradContext *, const at::Tensor &x) { return x.clone(); }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *,
                                                   const torch::autograd::variable_list &grads)
    {
        at::Tensor g = grads[0].clone();
        g.view({-1})[5] = NAN;
        g.view({-1})[9] = INFINITY;
        g.view({-1})[12] = -INFINITY;
        return {g};
    }
};

// One probed pass of `m` on the host (which reuses and derives scans) into `host`, and one on the
// device path (which scans every tensor): empty when their maps agree, else the first difference.
QString hostMapDiffersFromScans(ObservedSequential &m, const at::Tensor &x, StepRecord &host)
{
    StepRecord device;
    testing::probedPass(m, x, host);
    testing::probedPass(m, x, device, true, /*devicePathOnCpu=*/true);
    for (const Layer &l : m.layers()) {
        const QString diff = testing::layerHealthDiff(device.layers[l.id], host.layers[l.id]);
        if (!diff.isEmpty())
            return QString::fromStdString(l.path) + QStringLiteral(" ") + diff;
    }
    return {};
}

TensorHealth healthOnDevice(const at::Tensor &t)
{
    return healthFromRawStats(t.numel(), 0, rawStatsOnDevice(t).contiguous().data_ptr<double>());
}

}  // namespace

void TestHealthGathering::deviceStatsMatchHostScan()
{
    // The device path's reductions, run on the CPU here, agree with the fused host scan.
    at::Tensor t = torch::randn({1000});
    t[3] = NAN;
    t[7] = INFINITY;
    t[9] = -INFINITY;
    const TensorHealth d = healthOnDevice(t);
    const TensorHealth h = computeHealth(t);
    QCOMPARE(d.numel, h.numel);
    QCOMPARE(d.nan, h.nan);
    QCOMPARE(d.posInf, h.posInf);
    QCOMPARE(d.negInf, h.negInf);
    QCOMPARE(d.min, h.min);
    QCOMPARE(d.max, h.max);
    QVERIFY(std::fabs(d.finiteL2 - h.finiteL2) < 1e-9 * h.finiteL2);
}

void TestHealthGathering::deviceStatsOfEmptyAndAllNonFinite()
{
    // An empty tensor (a batch whose samples were all quarantined) has no minimum to reduce to.
    const TensorHealth empty = healthOnDevice(torch::empty({0, 5}));
    QCOMPARE(empty.numel, 0);
    QCOMPARE(empty.nonFinite(), 0);
    QVERIFY(std::isnan(empty.min) && std::isnan(empty.max) && std::isnan(empty.absMax));
    QCOMPARE(empty.finiteL2, 0.0);
    const at::Tensor bad = torch::tensor({NAN, INFINITY, -INFINITY, NAN});
    const TensorHealth d = healthOnDevice(bad);
    QCOMPARE(d.nan, 2);
    QCOMPARE(d.posInf, 1);
    QCOMPARE(d.negInf, 1);
    QVERIFY(std::isnan(d.min) && std::isnan(d.max) && std::isnan(d.absMax));
    QCOMPARE(d.finiteL2, 0.0);
    // fp16 and doubles past float's range keep their values.
    const at::Tensor wide = torch::tensor({1e300, -2.0}, torch::kDouble);
    const TensorHealth w = healthOnDevice(wide);
    QCOMPARE(w.nonFinite(), 0);
    QCOMPARE(w.max, 1e300);
    QCOMPARE(w.min, -2.0);
}

void TestHealthGathering::collectorDevicePathMatchesHostScan()
{
    // The device path stages tensors in rows of kRowWidth and reduces them together: sizes
    // around a row's edge, every floating type, views, non-finite values at the edges, a tensor
    // too large for the first staging buffer (a flush mid-step, then a larger buffer) and a
    // second step reusing the buffer.
    constexpr std::int64_t w = HealthCollector::kRowWidth;
    torch::manual_seed(3);
    HealthCollector collector;
    collector.setDevicePathOnCpu(true);
    for (int step = 0; step < 3; ++step) {
        std::vector<at::Tensor> tensors;
        for (const std::int64_t n : {std::int64_t(1), w - 1, w, w + 1, 3 * w + 5})
            tensors.push_back(torch::randn({n}) * (step + 1));
        tensors[1][0] = NAN;
        tensors[2][w - 1] = INFINITY;
        tensors[3][w] = -INFINITY;
        tensors.push_back(torch::full({7}, NAN));       // nothing finite
        tensors.push_back(torch::randn({40, 30}).t());  // not contiguous
        tensors.push_back(torch::randn({w + 3}).to(torch::kHalf));
        tensors.push_back((torch::randn({2 * w}) * 1e30).to(torch::kBFloat16));
        tensors.push_back(torch::tensor({1e300, -1.0, double(NAN)}, torch::kDouble));  // reduced on its own
        tensors.push_back(torch::empty({0, 4}));
        tensors.push_back(torch::arange(10));         // integers
        tensors.push_back(torch::randn({1100 * w}));  // past the initial 1024 rows
        tensors.push_back(torch::randn({5}));
        std::vector<TensorHealth> healths(tensors.size() + 1);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const HealthCollector::Measured m = collector.record(&healths[i], tensors[i]);
            if (i == 3)
                collector.recordAgain(&healths.back(), m);
        }
        collector.resolve();
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const QString diff = testing::healthDiff(computeHealth(tensors[i]), healths[i]);
            QVERIFY2(diff.isEmpty(), QString("step %1 tensor %2: %3").arg(step).arg(i).arg(diff).toUtf8());
        }
        QVERIFY(testing::healthDiff(computeHealth(tensors[3]), healths.back()).isEmpty());
    }
}

void TestHealthGathering::reluHealthFollowsFromItsInput_data()
{
    QTest::addColumn<QString>("kind");
    for (const char *kind : {"normal", "all negative", "all positive", "NaN", "+Inf", "-Inf", "positive and -Inf",
                             "only -Inf and NaN", "only NaN", "past float's square", "empty", "odd length", "half"})
        QTest::newRow(kind) << QString::fromLatin1(kind);
}

void TestHealthGathering::reluHealthFollowsFromItsInput()
{
    // A ReLU's output is not scanned: its health comes from its input's scan. It must be what a
    // scan of the output gives, with the fast path's L2 bit for bit.
    QFETCH(QString, kind);
    torch::manual_seed(11);
    at::Tensor x = torch::randn({4099});
    if (kind == "all negative")
        x = -x.abs() - 1;
    else if (kind == "all positive")
        x = x.abs() + 1;
    else if (kind == "NaN")
        x[17] = NAN;
    else if (kind == "+Inf")
        x[4098] = INFINITY;
    else if (kind == "-Inf")
        x[0] = -INFINITY;
    else if (kind == "positive and -Inf")
        x = torch::tensor({2.0f, -INFINITY, 3.0f});
    else if (kind == "only -Inf and NaN")
        x = torch::tensor({-INFINITY, NAN, -INFINITY});
    else if (kind == "only NaN")
        x = torch::full({40}, NAN);
    else if (kind == "past float's square")
        x[5] = 3e19f;
    else if (kind == "empty")
        x = torch::empty({0});
    else if (kind == "odd length")
        x = torch::randn({37});
    else if (kind == "half")
        x = x.to(torch::kHalf);
    double positive = -1;
    const TensorHealth in = computeHealth(x, &positive);
    QVERIFY(positive >= 0);
    const TensorHealth derived = reluHealth(in, positive);
    // (CPU LibTorch 1.13 has no fp16 relu; through float it is exact.)
    const TensorHealth scanned = computeHealth(
        x.scalar_type() == torch::kHalf ? torch::relu(x.to(torch::kFloat)).to(torch::kHalf) : torch::relu(x));
    const QString diff = testing::healthDiff(scanned, derived);
    QVERIFY2(diff.isEmpty(), diff.toUtf8());
    if (kind == "normal" || kind == "all positive" || kind == "odd length")
        QCOMPARE(derived.finiteL2, scanned.finiteL2);  // exactly, not only to rounding
}

void TestHealthGathering::reusedScansMatchScanningEveryTensor()
{
    // On the host a ReLU's output health comes from its input's scan, Flatten's from the tensor
    // it reshapes, and the model's input from its first layer's; the device path scans every
    // tensor itself. Both must give the same map, with NaN and Inf flowing through.
    namespace nn = torch::nn;
    torch::manual_seed(5);
    ObservedSequential m("SmallCNN");
    nn::Conv2d conv(nn::Conv2dOptions(3, 4, 3).padding(1));
    nn::MaxPool2d pool(2);
    m.add("conv", nn::AnyModule(conv));
    m.add("relu", nn::AnyModule(nn::ReLU()));
    m.add("pool", nn::AnyModule(pool));
    m.add("flatten", nn::AnyModule(nn::Flatten()));
    m.add("fc", nn::AnyModule(nn::Linear(4 * 4 * 4, 3)));
    m.finalize();
    at::Tensor x = torch::randn({2, 3, 8, 8});
    x[0][1][2][3] = INFINITY;
    x[1][2][7][7] = NAN;
    StepRecord host;
    const QString diff = hostMapDiffersFromScans(m, x, host);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    const LayerHealth &relu = host.layers[2], &flatten = host.layers[4];
    QVERIFY(relu.forward.nan > 0 && relu.forward.posInf > 0 && relu.forward.negInf == 0);
    // Flatten's health, reused from the pooling's scan, against the flattened tensor itself
    // counted by LibTorch's own isnan/isinf.
    at::Tensor flat;
    {
        torch::NoGradGuard noGrad;
        flat = pool(torch::relu(conv(x))).flatten(1);
    }
    QCOMPARE(flatten.forward.numel, flat.numel());
    QCOMPARE(flatten.forward.nan, torch::isnan(flat).sum().item<std::int64_t>());
    QCOMPARE(flatten.forward.posInf, torch::isposinf(flat).sum().item<std::int64_t>());
    QCOMPARE(flatten.forward.negInf, torch::isneginf(flat).sum().item<std::int64_t>());
    QVERIFY(flatten.forward.nan > 0 && flatten.forward.posInf > 0);
    const double finiteL2 = torch::where(torch::isfinite(flat), flat, torch::zeros_like(flat)).norm().item<double>();
    QVERIFY2(std::abs(flatten.forward.finiteL2 - finiteL2) <= 1e-5 * finiteL2,
             qPrintable(QStringLiteral("%1 vs %2").arg(flatten.forward.finiteL2).arg(finiteL2)));
}

void TestHealthGathering::poolAndFlattenGradientsFollowFromTheirOutputs_data()
{
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("padding");
    QTest::addColumn<int>("dilation");
    QTest::addColumn<bool>("ceil");
    QTest::addColumn<bool>("poisoned");
    QTest::addColumn<bool>("apart");  // no input in two windows: the gradient is derived, not scanned
    struct Pool {
        const char *name;
        int kernel, stride, padding, dilation;
        bool ceil, apart;
    };
    const Pool pools[] = {{"2x2", 2, 2, 0, 1, false, true},
                          {"3x3 padded", 3, 3, 1, 1, false, true},
                          {"3x3 ceil mode", 3, 3, 0, 1, true, true},
                          {"3x3 stride 2 (overlapping)", 3, 2, 0, 1, false, false},
                          {"2x2 dilated, stride 2 (overlapping)", 2, 2, 0, 2, false, false},
                          {"2x2 dilated, stride 3", 2, 3, 0, 2, false, true}};
    for (const Pool &p : pools)
        for (bool poisoned : {false, true})
            QTest::addRow("%s%s", p.name, poisoned ? ", NaN and Inf in the gradient" : "")
                << p.kernel << p.stride << p.padding << p.dilation << p.ceil << poisoned << p.apart;
}

void TestHealthGathering::poolAndFlattenGradientsFollowFromTheirOutputs()
{
    // On the host the gradient flowing into a max pool's input (a ReLU's output) follows from
    // the one flowing into its output when no input lies in two windows, and Flatten's input
    // gradient is its output gradient reshaped. The device path scans every gradient itself.
    QFETCH(int, kernel);
    QFETCH(int, stride);
    QFETCH(int, padding);
    QFETCH(int, dilation);
    QFETCH(bool, ceil);
    QFETCH(bool, poisoned);
    QFETCH(bool, apart);
    namespace nn = torch::nn;
    torch::manual_seed(7);
    nn::Conv2d conv(nn::Conv2dOptions(3, 4, 3).padding(1));
    nn::MaxPool2d pool(nn::MaxPool2dOptions(kernel).stride(stride).padding(padding).dilation(dilation).ceil_mode(ceil));
    const at::Tensor x = torch::randn({2, 3, 8, 8});
    std::int64_t features = 0;
    {
        torch::NoGradGuard noGrad;
        features = pool(torch::relu(conv(x))).flatten(1).size(1);
    }
    ObservedSequential m("SmallCNN");
    m.add("conv", nn::AnyModule(conv));
    m.add("relu", nn::AnyModule(nn::ReLU()));
    m.add("pool", nn::AnyModule(pool));
    m.add("flatten", nn::AnyModule(nn::Flatten()));
    if (poisoned)
        m.add("poison", nn::AnyModule(nn::Functional([](const at::Tensor &t) { return PoisonGradient::apply(t); })));
    m.add("fc", nn::AnyModule(nn::Linear(features, 3)));
    m.finalize();
    StepRecord host;
    const QString diff = hostMapDiffersFromScans(m, x, host);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    const TensorHealth &reluGrad = host.layers[2].grad, &poolGrad = host.layers[3].grad;
    QCOMPARE(reluGrad.numel, 2 * 4 * 8 * 8);
    QCOMPARE(poolGrad.numel, 2 * features);
    QVERIFY(reluGrad.present && reluGrad.min <= 0.0 && reluGrad.max >= 0.0);  // zeros where no maximum was
    if (poisoned && apart) {  // each poisoned value in a place of its own
        QCOMPARE(reluGrad.nan, 1);
        QCOMPARE(reluGrad.posInf, 1);
        QCOMPARE(reluGrad.negInf, 1);
    }
    if (!poisoned)
        QCOMPARE(reluGrad.nonFinite(), 0);
}

void TestHealthGathering::derivedHealthIsNotReadAgain_data()
{
    // A batch of 2 images of 3x8x8; a 3x3 convolution to 4 channels keeps 8x8 (512 values), a 2x2
    // max pool leaves 128, the linear layer's output is 2x3. Each row lists the layers and what
    // the host map must read: every other health follows from a scan already made.
    QTest::addColumn<QStringList>("layers");
    QTest::addColumn<qint64>("scanned");
    constexpr qint64 batch = 2 * 3 * 8 * 8, conv = 2 * 4 * 8 * 8, pooled = 2 * 4 * 4 * 4, out = 2 * 3;
    // Forward: the batch, conv's output (relu's follows), the pool's, fc's. Backward: fc's output
    // gradient (the whole model's is the same), flatten's (the pool's is the same values, relu's
    // those among zeros), conv's.
    QTest::newRow("conv, relu, pool, flatten, fc")
        << QStringList{QStringLiteral("conv"), QStringLiteral("relu"), QStringLiteral("pool"),
                       QStringLiteral("flatten"), QStringLiteral("fc")}
        << batch + conv + pooled + out + out + pooled + conv;
    // Forward: the batch, conv's output (flatten's is the same, relu's follows through it), fc's.
    // Backward: fc's output gradient, relu's, flatten's (conv's is the same values).
    QTest::newRow("conv, flatten, relu, fc")
        << QStringList{QStringLiteral("conv"), QStringLiteral("flatten"), QStringLiteral("relu"), QStringLiteral("fc")}
        << batch + conv + out + out + conv + conv;
    // A ReLU first: nothing scanned before it summed positive squares, so its output is read.
    QTest::newRow("relu, conv, flatten, fc")
        << QStringList{QStringLiteral("relu"), QStringLiteral("conv"), QStringLiteral("flatten"), QStringLiteral("fc")}
        << batch + batch + conv + out + out + conv + batch;
}

void TestHealthGathering::derivedHealthIsNotReadAgain()
{
    QFETCH(QStringList, layers);
    QFETCH(qint64, scanned);
    namespace nn = torch::nn;
    torch::manual_seed(3);
    ObservedSequential m("Net");
    std::int64_t features = 2 * 4 * 8 * 8 / 2;
    for (const QString &name : layers) {
        if (name == QLatin1String("conv"))
            m.add("conv", nn::AnyModule(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(1))));
        else if (name == QLatin1String("relu"))
            m.add("relu", nn::AnyModule(nn::ReLU()));
        else if (name == QLatin1String("pool")) {
            m.add("pool", nn::AnyModule(nn::MaxPool2d(2)));
            features /= 4;
        } else if (name == QLatin1String("flatten"))
            m.add("flatten", nn::AnyModule(nn::Flatten()));
        else
            m.add("fc", nn::AnyModule(nn::Linear(features, 3)));
    }
    m.finalize();
    StepRecord record;
    // The batch requires a gradient, so that a first layer without parameters has one too.
    const testing::ProbedPass pass = testing::probedPass(m, torch::randn({2, 3, 8, 8}).requires_grad_(), record);
    // What was not read is still reported: every layer has its forward health and its gradient's.
    for (const Layer &l : m.layers()) {
        QVERIFY2(record.layers[l.id].forward.present, l.path.c_str());
        QVERIFY2(record.layers[l.id].grad.present, l.path.c_str());
    }
    QCOMPARE(pass.hostElementsScanned, scanned);
}

QTEST_GUILESS_MAIN(TestHealthGathering)
#include "tst_health_gathering.moc"
