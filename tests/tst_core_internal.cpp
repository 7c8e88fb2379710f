// Core internals with real tensors: TensorHealth on hand-built tensors of each dtype, the op
// tracer's verdict, and the trainer's guarantees (a discarded step changes nothing; a rollback
// restores everything; an update ratio is the step over the weights).
#include "probe/op_tracer.h"
#include "health/tensor_health.h"
#include "scenarios/scenarios.h"
#include "training/trainer.h"

#include <torch/torch.h>

#include <QtTest>

#include <cmath>

using namespace nanscope;

Q_DECLARE_METATYPE(at::ScalarType)

namespace {

std::vector<at::Tensor> adamMoments(torch::optim::Optimizer &opt)
{
    std::vector<at::Tensor> out;
    for (const auto &group : opt.param_groups())
        for (const at::Tensor &p : group.params()) {
            auto it = opt.state().find(c10::guts::to_string(p.unsafeGetTensorImpl()));
            if (it == opt.state().end())
                continue;
            auto &s = static_cast<torch::optim::AdamWParamState &>(*it->second);
            out.push_back(s.exp_avg().clone());
            out.push_back(s.exp_avg_sq().clone());
            out.push_back(torch::tensor(double(s.step())));
        }
    return out;
}

bool sameBits(const std::vector<at::Tensor> &a, const std::vector<at::Tensor> &b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!torch::equal(a[i], b[i]))
            return false;
    return true;
}

}  // namespace

class TestCoreInternal : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void health_data();
    void health();
    void floatKernelFindsEveryPosition_data();
    void floatKernelFindsEveryPosition();
    void allFiniteEveryDtype_data();
    void allFiniteEveryDtype();
    void nonContiguous();
    void hugeFiniteValues();
    void emptyTensor();
    void tracerIgnoresWhatCopyOverwrites_data();
    void tracerIgnoresWhatCopyOverwrites();
    void nonFiniteRowsNamesDatasetIndices();
    void discardedStepChangesNothing();
    void rollbackRestoresBuffersAndOptimizerBitForBit();
    void updateRatioIsTheStepOverTheWeights();
};

void TestCoreInternal::health_data()
{
    QTest::addColumn<at::ScalarType>("dtype");
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<qint64>("nan");
    QTest::addColumn<qint64>("posInf");
    QTest::addColumn<qint64>("negInf");
    QTest::addColumn<double>("min");
    QTest::addColumn<double>("max");
    const std::pair<const char *, at::ScalarType> types[] = {
        {"float", at::kFloat}, {"double", at::kDouble}, {"half", at::kHalf}, {"bfloat16", at::kBFloat16}};
    for (const auto &[name, t] : types) {
        QTest::addRow("%s all-nan", name)
            << t << "all-nan" << qint64(37) << qint64(0) << qint64(0) << double(NAN) << double(NAN);
        QTest::addRow("%s mixed-inf", name) << t << "mixed-inf" << qint64(1) << qint64(2) << qint64(3) << -2.0 << 4.0;
        QTest::addRow("%s finite", name) << t << "finite" << qint64(0) << qint64(0) << qint64(0) << -2.0 << 4.0;
    }
}

void TestCoreInternal::health()
{
    QFETCH(at::ScalarType, dtype);
    QFETCH(QString, pattern);
    at::Tensor t;
    if (pattern == QLatin1String("all-nan")) {
        t = torch::full({37}, NAN);
    } else {
        // 40 values: -2..4 finite, then the non-finite ones sprinkled in
        t = torch::linspace(-2, 4, 40);
        if (pattern == QLatin1String("mixed-inf")) {
            t[1] = NAN;
            t[5] = INFINITY;
            t[6] = INFINITY;
            t[10] = -INFINITY;
            t[11] = -INFINITY;
            t[12] = -INFINITY;
        }
    }
    t = t.to(dtype);
    const TensorHealth h = computeHealth(t);
    QFETCH(qint64, nan);
    QFETCH(qint64, posInf);
    QFETCH(qint64, negInf);
    QFETCH(double, min);
    QFETCH(double, max);
    QCOMPARE(h.numel, t.numel());
    QCOMPARE(h.nan, nan);
    QCOMPARE(h.posInf, posInf);
    QCOMPARE(h.negInf, negInf);
    if (std::isnan(min)) {
        QVERIFY(std::isnan(h.min) && std::isnan(h.max) && std::isnan(h.absMax));
        QCOMPARE(h.finiteL2, 0.0);
    } else {
        QCOMPARE(h.min, min);
        QCOMPARE(h.max, max);
        QCOMPARE(h.absMax, 4.0);
        const at::Tensor finite = t.to(at::kDouble).nan_to_num(0, 0, 0);
        QVERIFY(std::fabs(h.finiteL2 - finite.norm().item<double>()) < 1e-6 * h.finiteL2);
    }
}

void TestCoreInternal::floatKernelFindsEveryPosition_data()
{
    // 8245 floats: two blocks of 4096, then a tail shorter than a vector step (tst_float_kernels runs
    // each code path; this is the one the CPU chose, through computeHealth).
    QTest::addColumn<int>("position");
    QTest::addColumn<double>("value");
    const std::pair<const char *, double> values[] = {{"nan", NAN}, {"+inf", INFINITY}, {"-inf", -INFINITY}};
    for (const auto &[name, value] : values)
        for (int position : {0, 9, 20, 4100, 4120, 8230, 8244})
            QTest::addRow("%s at %d", name, position) << position << value;
}

void TestCoreInternal::floatKernelFindsEveryPosition()
{
    QFETCH(int, position);
    QFETCH(double, value);
    torch::manual_seed(3);
    at::Tensor t = torch::randn({8245});
    const double lo = t.min().item<double>(), hi = t.max().item<double>();
    const double l2 = t.to(at::kDouble).norm().item<double>();
    const TensorHealth clean = computeHealth(t);
    QCOMPARE(clean.nonFinite(), 0);
    QCOMPARE(clean.min, lo);
    QCOMPARE(clean.max, hi);
    QVERIFY(std::fabs(clean.finiteL2 - l2) < 1e-6 * l2);
    const double replaced = t[position].item<double>();
    t[position] = value;
    const TensorHealth h = computeHealth(t);
    QCOMPARE(h.nan, qint64(std::isnan(value)));
    QCOMPARE(h.posInf, qint64(value > 0 && std::isinf(value)));
    QCOMPARE(h.negInf, qint64(value < 0 && std::isinf(value)));
    QVERIFY(std::fabs(h.finiteL2 - std::sqrt(l2 * l2 - replaced * replaced)) < 1e-6 * l2);
}

void TestCoreInternal::allFiniteEveryDtype_data()
{
    QTest::addColumn<at::ScalarType>("dtype");
    QTest::addColumn<double>("value");
    QTest::addColumn<bool>("finite");
    const std::pair<const char *, at::ScalarType> types[] = {
        {"float", at::kFloat}, {"double", at::kDouble}, {"half", at::kHalf}, {"bfloat16", at::kBFloat16}};
    for (const auto &[name, t] : types) {
        QTest::addRow("%s finite", name) << t << 65504.0 << true;  // fp16's largest: all but one exponent bit
        QTest::addRow("%s nan", name) << t << double(NAN) << false;
        QTest::addRow("%s +inf", name) << t << double(INFINITY) << false;
        QTest::addRow("%s -inf", name) << t << double(-INFINITY) << false;
    }
}

void TestCoreInternal::allFiniteEveryDtype()
{
    QFETCH(at::ScalarType, dtype);
    QFETCH(double, value);
    QFETCH(bool, finite);
    at::Tensor t = torch::randn({5000}).to(dtype);
    QVERIFY(allFinite(t));
    t[4321] = value;  // past the first 4096-element chunk
    QCOMPARE(allFinite(t), finite);
    QCOMPARE(allFinite(t.reshape({50, 100}).t()), finite);  // non-contiguous
}

void TestCoreInternal::nonContiguous()
{
    at::Tensor base = torch::arange(24, torch::kFloat).reshape({4, 6});
    base[0][1] = NAN;
    base[2][1] = -INFINITY;
    const at::Tensor column = base.select(1, 1);  // stride 6
    QVERIFY(!column.is_contiguous());
    const TensorHealth h = computeHealth(column);
    QCOMPARE(h.numel, 4);
    QCOMPARE(h.nan, 1);
    QCOMPARE(h.negInf, 1);
    QCOMPARE(h.min, 7.0);
    QCOMPARE(h.max, 19.0);
    const TensorHealth ht = computeHealth(base.t());
    QCOMPARE(ht.nan, 1);
    QCOMPARE(ht.negInf, 1);
}

void TestCoreInternal::hugeFiniteValues()
{
    const at::Tensor t = torch::tensor({3.0e38f, -3.0e38f, 1.0f});
    const TensorHealth h = computeHealth(t);
    QCOMPARE(h.nonFinite(), 0);
    QCOMPARE(h.max, double(3.0e38f));
    QCOMPARE(h.absMax, double(3.0e38f));
    QVERIFY(std::isfinite(h.finiteL2));  // accumulated in double: no overflow of the norm
    QVERIFY(h.finiteL2 > 4.2e38);
}

void TestCoreInternal::emptyTensor()
{
    const TensorHealth h = computeHealth(torch::empty({0, 5}));
    QVERIFY(h.present);
    QCOMPARE(h.numel, 0);
    QCOMPARE(h.nonFinite(), 0);
    QVERIFY(std::isnan(h.min));
    QCOMPARE(computeHealth(at::Tensor()).present, false);
}

void TestCoreInternal::tracerIgnoresWhatCopyOverwrites_data()
{
    QTest::addColumn<float>("oldValue");
    QTest::addRow("destination held 0") << 0.0f;
    QTest::addRow("destination held NaN") << float(NAN);  // uninitialised memory can hold anything
}

void TestCoreInternal::tracerIgnoresWhatCopyOverwrites()
{
    // A cast to fp16 overflows in copy_: it is the producer, whatever its destination held.
    QFETCH(float, oldValue);
    at::Tensor destination = torch::full({4}, oldValue, torch::kHalf);
    const at::Tensor source = torch::full({4}, 1.0e6f);
    TracedOp traced;
    {
        OpTracer tracer;
        destination.copy_(source);
        traced = tracer.result();
    }
    QVERIFY(traced.found);
    QCOMPARE(traced.op, std::string("aten::copy_"));
    QVERIFY(std::isinf(destination[0].item<float>()));
}

void TestCoreInternal::nonFiniteRowsNamesDatasetIndices()
{
    at::Tensor batch = torch::zeros({4, 3});
    batch[1][2] = NAN;
    batch[3][0] = -INFINITY;
    QVERIFY(nonFiniteRows(batch, {40, 41, 42, 43}) == (std::vector<std::int64_t>{41, 43}));
}

void TestCoreInternal::discardedStepChangesNothing()
{
    RunConfig config;
    config.scenario = "nan-input";
    Trainer trainer(buildRunSetup(config), config);
    // Find the first step whose batch holds the bad samples; apply the clean ones before it.
    for (int i = 0; i < 30; ++i) {
        const auto params = cloneAll(trainer.model().parameters());
        const auto buffers = cloneAll(trainer.model().buffers());
        auto rec = trainer.computeStep();
        if (rec->nonFinite()) {
            // BatchNorm's running statistics took in NaN during the forward pass...
            QVERIFY(!trainer.stateFinite());
            trainer.discardStep(*rec, false);
            // ...and discarding the step puts everything back, bit for bit.
            QVERIFY(sameBits(cloneAll(trainer.model().parameters()), params));
            QVERIFY(sameBits(cloneAll(trainer.model().buffers()), buffers));
            QVERIFY(trainer.stateFinite());
            return;
        }
        std::vector<Event> events;
        std::string stop;
        trainer.applyStep(*rec, events, stop);
    }
    QFAIL("no non-finite batch in 30 steps");
}

void TestCoreInternal::rollbackRestoresBuffersAndOptimizerBitForBit()
{
    RunConfig config;
    config.scenario = "safe-training";
    config.snapshotEvery = 5;
    Trainer trainer(buildRunSetup(config), config);
    std::vector<at::Tensor> params, buffers, moments;
    for (int i = 0; i < 14; ++i) {
        if (trainer.step() == 10) {
            params = cloneAll(trainer.model().parameters());
            buffers = cloneAll(trainer.model().buffers());
            moments = adamMoments(trainer.optimizer());
        }
        auto rec = trainer.computeStep();
        QVERIFY(!rec->nonFinite() || rec->origin.phase == Phase::Input);
        std::vector<Event> events;
        std::string stop;
        trainer.applyStep(*rec, events, stop);
    }
    QVERIFY(!moments.empty());
    QVERIFY(!sameBits(cloneAll(trainer.model().buffers()), buffers));  // training moved them on
    QVERIFY(!sameBits(adamMoments(trainer.optimizer()), moments));
    EventMessage what;
    QVERIFY(trainer.rollback(true, &what));
    QCOMPARE(what.id, std::string("restored-lr-halved"));
    QCOMPARE(what.args, (std::vector<std::string>{"10", "0.0005"}));
    QCOMPARE(composeEventText(what),
             std::string("non-finite loss: restored the state of step 10 (parameters, buffers, optimizer), lr halved "
                         "to 0.0005"));
    QVERIFY(sameBits(cloneAll(trainer.model().parameters()), params));
    QVERIFY(sameBits(cloneAll(trainer.model().buffers()), buffers));
    QVERIFY(sameBits(adamMoments(trainer.optimizer()), moments));
    QCOMPARE(trainer.learningRate(), 0.5e-3);
}

// Plain SGD moves each weight by lr * its gradient, so a layer's |dw| / |w| is lr * |g| / |w|, from
// the parameter gradients and parameters the map measured; a skipped update measures nothing.
void TestCoreInternal::updateRatioIsTheStepOverTheWeights()
{
    RunConfig config;
    config.scenario = "safe-training";
    config.optimizer.kind = OptimizerKind::Sgd;
    config.optimizer.momentum = 0.0;
    config.optimizer.weightDecay = 0.0;
    Controls controls = defaultControls(config);
    controls.clipNorm.reset();
    controls.learningRate = 0.05;
    config.controls = controls;
    Trainer trainer(buildRunSetup(config), config);
    int measured = 0;
    for (int i = 0; i < 3; ++i) {
        auto rec = trainer.computeStep();
        std::vector<Event> events;
        std::string stop;
        trainer.applyStep(*rec, events, stop);
        QVERIFY(!rec->skipped);
        for (std::size_t l = 0; l < rec->layers.size(); ++l) {
            const LayerHealth &h = rec->layers[l];
            if (trainer.model().layerParameters(int(l)).empty()) {
                QVERIFY(std::isnan(h.updateRatio));
                continue;
            }
            const double expected = 0.05 * h.paramGrads.finiteL2 / h.params.finiteL2;
            QVERIFY2(std::fabs(h.updateRatio - expected) <= 1e-4 * expected,
                     qPrintable(QStringLiteral("layer %1: %2 vs %3").arg(l).arg(h.updateRatio).arg(expected)));
            ++measured;
        }
    }
    QVERIFY(measured >= 6);
    auto rec = trainer.computeStep();
    trainer.discardStep(*rec, false);
    for (const LayerHealth &h : rec->layers)
        QVERIFY(std::isnan(h.updateRatio));
}

QTEST_GUILESS_MAIN(TestCoreInternal)
#include "tst_core_internal.moc"
