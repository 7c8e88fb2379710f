// Core internals with real tensors: TensorHealth on hand-built tensors of each dtype, the op
// tracer's verdict, and the trainer's guarantees (a discarded step changes nothing; a rollback
// restores everything).
#include "probe/op_tracer.h"
#include "health/tensor_health.h"
#include "session/trend_forecast.h"
#include "training/trainer.h"

#include <torch/torch.h>

#include <QtTest>

#include <cmath>
#include <set>

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
    void overflowForecast_data();
    void overflowForecast();
    void updateRatioIsTheStepOverTheWeights();
    void otherForecasts_data();
    void otherForecasts();
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
    Trainer trainer(buildScenario(config), config);
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
    Trainer trainer(buildScenario(config), config);
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
    std::string what;
    QVERIFY(trainer.rollback(true, &what));
    QVERIFY(what.find("step 10") != std::string::npos);
    QVERIFY(sameBits(cloneAll(trainer.model().parameters()), params));
    QVERIFY(sameBits(cloneAll(trainer.model().buffers()), buffers));
    QVERIFY(sameBits(adamMoments(trainer.optimizer()), moments));
    QCOMPARE(trainer.learningRate(), 0.5e-3);
}

// What a forecast raised over a series of steps: the first warning's step and text, how many, the
// layers they named, and whether every event was a warning.
struct ForecastWarnings {
    int firstStep = -1;
    QString firstText;
    int count = 0;
    std::set<int> layers;
    bool onlyWarnings = true;

    void take(int step, const std::vector<Event> &events)
    {
        for (const Event &e : events) {
            onlyWarnings = onlyWarnings && e.kind == EventKind::Warning;
            layers.insert(e.layer);
            if (firstStep < 0) {
                firstStep = step;
                firstText = QString::fromStdString(e.text);
            }
            ++count;
        }
    }
};

// One leaf layer under the root whose output's absmax follows `values`, one step each: the step
// of the first warning and its text.
void TestCoreInternal::overflowForecast_data()
{
    QTest::addColumn<QVector<double>>("values");
    QTest::addColumn<int>("precision");
    QTest::addColumn<int>("warnStep");  // -1: no warning
    QTest::addColumn<QString>("text");
    QVector<double> tenfold;  // x10 a step from 10: fp16's 65504 is 0.8 steps past 10^4
    for (double v = 10; tenfold.size() < 6; v *= 10)
        tenfold << v;
    QTest::addRow("fp16, x10 a step") << tenfold << int(Precision::FP16) << 3
                                      << "fc output grows x10 a step: fp16 overflow in about 1 step";
    QTest::addRow("fp32, same values") << tenfold << int(Precision::FP32) << -1 << "";
    // A diverging run: the exponent doubles each step.
    const QVector<double> diverging{1, 2, 10, 1e3, 1e7, 1e15, 1e30};
    // At step 5 (1e15, the first past a quarter of fp32's 38.5 decades) the last three rises, 2, 4
    // and 8 decades, give 14/3 decades a step: 23.5 decades left are 5 steps.
    QTest::addRow("fp32, diverging") << diverging << int(Precision::FP32) << 5
                                     << "fc output grows x4.6e+04 a step: fp32 overflow in about 5 steps";
    // Early training moves fast from tiny values: far from the largest value, no alarm.
    QTest::addRow("fp32, growth from 1e-8")
        << QVector<double>{1e-8, 1e-6, 1e-4, 1e-2, 1, 10, 10, 10} << int(Precision::FP32) << -1 << "";
    QTest::addRow("fp16, flat and noisy")
        << QVector<double>{300, 900, 200, 800, 300, 700, 250, 900, 300} << int(Precision::FP16) << -1 << "";
}

void TestCoreInternal::overflowForecast()
{
    QFETCH(QVector<double>, values);
    QFETCH(int, precision);
    QFETCH(int, warnStep);
    QFETCH(QString, text);
    TrendForecast forecast;
    forecast.reset({{0, "", "Net", -1}, {1, "fc", "Linear", 0}});
    ForecastWarnings seen;
    for (int step = 0; step < values.size(); ++step) {
        StepRecord r;
        r.step = step;
        r.layers.resize(2);
        for (LayerHealth &h : r.layers) {
            h.forward.present = true;
            h.forward.numel = 1;
            h.forward.absMax = values[step];
        }
        r.loss = 1.0;  // flat: the loss never warns here
        r.lossHealth.present = true;
        seen.take(step, forecast.add(r, Precision(precision), precision == int(Precision::FP16) ? "fp16" : "fp32"));
    }
    QVERIFY(seen.onlyWarnings);
    QVERIFY(seen.layers.empty() || seen.layers == std::set<int>{1});  // the leaf, not the container above it
    QCOMPARE(seen.firstStep, warnStep);
    QCOMPARE(seen.firstText, text);
    QVERIFY(seen.count <= 1);  // once a series
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
    Trainer trainer(buildScenario(config), config);
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

// The other trends: a value shrinking to 0 in reduced precision, updates as large as the weights,
// a loss scale that keeps falling below 1. `series` is what follows `values`, one step each.
void TestCoreInternal::otherForecasts_data()
{
    QTest::addColumn<QString>("series");
    QTest::addColumn<QVector<double>>("values");
    QTest::addColumn<int>("precision");
    QTest::addColumn<int>("warnStep");  // -1: no warning
    QTest::addColumn<QString>("text");
    QVector<double> tenthEachStep;  // /10 a step from 1e-2: fp16's 6e-8 is reached after step 5
    for (double v = 1e-2; tenthEachStep.size() < 8; v /= 10)
        tenthEachStep << v;
    // Half of fp16's 7.2 decades down is 2.4e-4: step 2 (1e-4) is the first past it; 3.2 decades
    // are left at one a step.
    QTest::addRow("fp16 gradient falling") << "grad" << tenthEachStep << int(Precision::FP16) << 3
                                           << "the gradient into fc shrinks x0.1 a step: below fp16's smallest value "
                                              "(6e-08) it rounds to 0 in about 2 steps";
    QTest::addRow("fp16 output falling") << "forward" << tenthEachStep << int(Precision::FP16) << 3
                                         << "fc output shrinks x0.1 a step: below fp16's smallest value (6e-08) it "
                                            "rounds to 0 in about 2 steps";
    QTest::addRow("fp32: nothing vanishes") << "grad" << tenthEachStep << int(Precision::FP32) << -1 << "";
    QTest::addRow("bf16: far from its smallest") << "grad" << tenthEachStep << int(Precision::BF16) << -1 << "";
    QTest::addRow("fp16, small but flat") << "grad" << QVector<double>(20, 1e-5) << int(Precision::FP16) << -1 << "";
    QTest::addRow("updates as large as the weights")
        << "update" << QVector<double>{0.01, 2, 3, 5, 8} << int(Precision::FP32) << 3
        << "fc weights move by 5 times their size a step (3 steps running; usual: 1e-4 to 1e-2): updates this large "
           "diverge, lower the learning rate";
    // A zero-initialised layer doubles, then grows by half, then a third: not divergence.
    QTest::addRow("a layer growing from zero")
        << "update" << QVector<double>{1, 1, 0.5, 0.33, 0.25, 1, 1, 0.9} << int(Precision::FP32) << -1 << "";
    QTest::addRow("usual updates") << "update" << QVector<double>(30, 1e-3) << int(Precision::FP32) << -1 << "";
    QTest::addRow("updates lost to rounding")
        << "update" << QVector<double>(25, 3e-9) << int(Precision::FP32) << 19
        << "fc weights barely move: |dw| / |w| is 3e-09 (20 steps running; usual: 1e-4 to 1e-2): updates this small "
           "are lost to rounding, raise the learning rate";
    QVector<double> tinyThenUsual(25, 3e-9);
    tinyThenUsual[10] = 1e-4;
    QTest::addRow("tiny, but not 20 running") << "update" << tinyThenUsual << int(Precision::FP32) << -1 << "";
    QTest::addRow("no gradient, no update")
        << "update-no-grad" << QVector<double>(25, 0.0) << int(Precision::FP32) << -1 << "";
    QTest::addRow("loss scale keeps falling below 1")
        << "scale" << QVector<double>{65536, 2, 1, 0.5, 0.5, 0.25, 0.125} << int(Precision::FP16) << 5
        << "the loss scale fell to 0.25 and keeps falling: gradients overflow fp16 even unscaled, and the scaler has "
           "nothing left to give";
    QTest::addRow("loss scale backs off to 0.5 once")
        << "scale" << QVector<double>{65536, 1, 0.5, 0.5, 1, 2} << int(Precision::FP16) << -1 << "";
}

void TestCoreInternal::otherForecasts()
{
    QFETCH(QString, series);
    QFETCH(QVector<double>, values);
    QFETCH(int, precision);
    QFETCH(int, warnStep);
    QFETCH(QString, text);
    TrendForecast forecast;
    forecast.reset({{0, "", "Net", -1}, {1, "fc", "Linear", 0}});
    ForecastWarnings seen;
    const std::string name = precisionName(Precision(precision));
    for (int step = 0; step < values.size(); ++step) {
        StepRecord r;
        r.step = step;
        r.layers.resize(2);
        LayerHealth &h = r.layers[1];
        for (TensorHealth *t : {&h.forward, &h.grad}) {
            t->present = true;
            t->numel = 1;
            t->absMax = 1.0;  // flat
        }
        if (series == QLatin1String("grad"))
            h.grad.absMax = values[step];
        else if (series == QLatin1String("forward"))
            h.forward.absMax = values[step];
        else if (series.startsWith(QLatin1String("update")))
            h.updateRatio = values[step];
        else {
            r.lossScaling = true;
            r.lossScale = values[step];
        }
        h.paramGrads.present = true;
        h.paramGrads.finiteL2 = series == QLatin1String("update-no-grad") ? 0.0 : 0.5;
        r.learningRate = 0.1;
        r.loss = 1.0;
        r.lossHealth.present = true;
        seen.take(step, forecast.add(r, Precision(precision), name));
    }
    QVERIFY(seen.onlyWarnings);
    QVERIFY(seen.layers.empty() || seen.layers == std::set<int>{series == QLatin1String("scale") ? -1 : 1});
    QCOMPARE(seen.firstText, text);
    QCOMPARE(seen.firstStep, warnStep);
    QVERIFY(seen.count <= 1);
}

QTEST_GUILESS_MAIN(TestCoreInternal)
#include "tst_core_internal.moc"
