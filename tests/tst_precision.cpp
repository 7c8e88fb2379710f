// Reduced precision inside the core, with real tensors: fp16 emulation rounds outputs and the
// gradients flowing back through them, CPU autocast gives bf16, the trainer unscales before it
// clips, and a step the loss scaler skips leaves the weights and the optimizer untouched.
#include "model_api/autocast_scope.h"
#include "nanscope/precision.h"
#include "nanscope/scenario.h"
#include "probe/observed_sequential.h"
#include "probe/probe.h"
#include "health/tensor_health.h"
#include "scenarios/scenarios.h"
#include "training/trainer.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <QtTest>

#include <cmath>

using namespace nanscope;

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

double gradNorm(const std::vector<at::Tensor> &params)
{
    double sumSq = 0;
    for (const at::Tensor &p : params)
        if (p.grad().defined())
            sumSq += std::pow(p.grad().norm().item<double>(), 2);
    return std::sqrt(sumSq);
}

RunConfig configFor(const std::string &scenario, Precision p, std::optional<double> clip = {}, double scale = 65536)
{
    RunConfig config;
    config.scenario = scenario;
    Controls c = findScenario(scenario)->defaults;
    c.precision = p;
    c.clipNorm = clip;
    c.lossScaling.initialScale = scale;
    config.controls = c;
    return config;
}

}  // namespace

class TestPrecision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { torch::set_num_threads(1); }
    void roundThroughHalf_data();
    void roundThroughHalf();
    void headroom_data();
    void headroom();
    void emulatedLayerOverflowsInBothDirections();
    void cpuAutocastGivesBf16();
    void gradientsAreUnscaledBeforeClipping();
    void skippedStepLeavesWeightsAndOptimizerUntouched();
};

void TestPrecision::roundThroughHalf_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<double>("rounded");
    QTest::addRow("exact") << 1.5 << 1.5;
    QTest::addRow("spacing 32 near 60000") << 60001.0 << 60000.0;
    QTest::addRow("largest half") << 65504.0 << 65504.0;
    QTest::addRow("rounds down to the largest") << 65519.0 << 65504.0;
    QTest::addRow("halfway to 65536 overflows") << 65520.0 << double(INFINITY);
    QTest::addRow("1e5") << 1e5 << double(INFINITY);
    QTest::addRow("-1e5") << -1e5 << -double(INFINITY);
    QTest::addRow("underflow to 0") << 1e-8 << 0.0;
    QTest::addRow("smallest subnormal") << std::ldexp(1.0, -24) << std::ldexp(1.0, -24);
}

void TestPrecision::roundThroughHalf()
{
    QFETCH(double, value);
    QFETCH(double, rounded);
    const at::Tensor t = torch::full({3}, value, torch::kFloat);
    const at::Tensor r = nanscope::roundThroughHalf(t);
    QCOMPARE(r.scalar_type(), at::kFloat);
    QCOMPARE(r[0].item<double>(), rounded);
}

void TestPrecision::headroom_data()
{
    QTest::addColumn<QString>("values");
    QTest::addColumn<double>("headroom");
    QTest::addRow("half of the range") << "32752 -3" << 0.5;
    QTest::addRow("exactly the largest") << "-65504 1" << 1.0;
    QTest::addRow("beyond: would overflow") << "131008" << 2.0;
    QTest::addRow("already Inf") << "1 inf" << double(INFINITY);
    QTest::addRow("NaN only") << "nan" << double(NAN);
}

void TestPrecision::headroom()
{
    QFETCH(QString, values);
    QFETCH(double, headroom);
    std::vector<float> v;
    for (const QString &s : values.split(QLatin1Char(' ')))
        v.push_back(s == QLatin1String("inf") ? INFINITY : s == QLatin1String("nan") ? NAN : s.toFloat());
    const TensorHealth h = computeHealth(torch::tensor(v));
    const double got = fp16Headroom(h);
    if (std::isnan(headroom))
        QVERIFY(std::isnan(got));
    else
        QCOMPARE(got, headroom);
    QVERIFY(std::isnan(fp16Headroom(TensorHealth{})));  // nothing observed
}

void TestPrecision::emulatedLayerOverflowsInBothDirections()
{
    // y = 1000 x: an input of 70 gives 70000 > 65504, so the emulated fp16 output is +Inf; an input
    // of 1 gives 1000, fine forward, but a gradient of 1e5 flowing back into it is Inf in fp16.
    ObservedSequential m("Net");
    torch::nn::Linear fc(torch::nn::LinearOptions(1, 1).bias(false));
    {
        torch::NoGradGuard noGrad;
        fc->weight.fill_(1000.0);
    }
    m.add("fc", torch::nn::AnyModule(fc));
    m.finalize();
    QVERIFY(m.setHalfEmulation(true));
    Probe probe;
    StepRecord rec;
    probe.beginStep(m, &rec);
    const at::Tensor x = torch::tensor({{70.0f}, {1.0f}, {65.0f}});
    const at::Tensor out = m.forward(x, &probe);
    QCOMPARE(out[1][0].item<double>(), 1000.0);
    QCOMPARE(out[2][0].item<double>(), 64992.0);  // 65000 rounded to fp16's spacing of 32
    (out.index({torch::indexing::Slice(1, 2)}).sum() * 100.0).backward();
    probe.finishStep();
    QCOMPARE(rec.layers[1].forward.posInf, std::int64_t(1));
    QCOMPARE(rec.layers[1].forward.absMax, 64992.0);
    QCOMPARE(rec.layers[1].grad.posInf, std::int64_t(0));  // a gradient of 100 fits
    // Without emulation the same layer stays finite.
    QVERIFY(m.setHalfEmulation(false));
    StepRecord plain;
    probe.beginStep(m, &plain);
    m.forward(x, &probe);
    probe.finishStep();
    QCOMPARE(plain.layers[1].forward.posInf, std::int64_t(0));
    QCOMPARE(plain.layers[1].forward.absMax, 70000.0);
    // Backward: a gradient too large for fp16 is rounded to Inf on its way through the output.
    QVERIFY(m.setHalfEmulation(true));
    const at::Tensor y = m.forward(torch::tensor({{1.0f}}), nullptr);
    at::Tensor seen;
    y.register_hook([&seen](const at::Tensor &g) { seen = g.clone(); });
    (y.sum() * 1e5).backward();
    QCOMPARE(seen[0][0].item<double>(), 1e5);  // what the loss sent, before the layer's half output
    QVERIFY(std::isinf(fc->weight.grad()[0][0].item<double>()));
}

void TestPrecision::cpuAutocastGivesBf16()
{
    const at::Tensor a = torch::randn({4, 8}), w = torch::randn({3, 8});
    {
        AutocastScope scope(Precision::BF16, "cpu");
        QVERIFY(scope.active());
        QCOMPARE(at::linear(a, w).scalar_type(), at::kBFloat16);
    }
    QVERIFY(!at::autocast::is_cpu_enabled());
    QCOMPARE(at::linear(a, w).scalar_type(), at::kFloat);
    // fp16 on the CPU is emulated by the model, not autocast; fp32 needs nothing.
    QVERIFY(!AutocastScope(Precision::FP16, "cpu").active());
    QVERIFY(!AutocastScope(Precision::FP32, "cpu").active());
    QCOMPARE(precisionLabel(Precision::FP16, "cpu"), std::string("fp16 (emulated on CPU)"));
    QCOMPARE(precisionLabel(Precision::FP16, "cuda"), std::string("fp16"));
    QCOMPARE(precisionLabel(Precision::BF16, "cpu"), std::string("bf16"));
}

void TestPrecision::gradientsAreUnscaledBeforeClipping()
{
    // large-lr-ce at scale 1024: nothing overflows, so fp16 sees (nearly) fp32's gradient.
    const RunConfig half = configFor("large-lr-ce", Precision::FP16, 0.5, 1024);
    const RunConfig full = configFor("large-lr-ce", Precision::FP32, 0.5);
    Trainer t16(buildRunSetup(half), half), t32(buildRunSetup(full), full);
    auto r16 = t16.computeStep();
    auto r32 = t32.computeStep();
    QCOMPARE(r16->lossScale, 1024.0);
    QCOMPARE(r32->lossScale, 1.0);
    QVERIFY(!r16->nonFinite());
    // The recorded norm is the unscaled one: within fp16 rounding of fp32's, not 1024 times it.
    QVERIFY2(std::fabs(r16->gradNorm / r32->gradNorm - 1.0) < 1e-2,
             qPrintable(QStringLiteral("%1 vs %2").arg(r16->gradNorm).arg(r32->gradNorm)));
    QVERIFY(r32->gradNorm > 0.5);  // so clipping has work to do
    std::vector<Event> events;
    std::string stop;
    t16.applyStep(*r16, events, stop);
    // Clipped after unscaling: the gradients the optimizer used have norm 0.5 (clipping the scaled
    // gradients first would leave 0.5 / 1024).
    QVERIFY(std::fabs(gradNorm(t16.model().parameters()) - 0.5) < 1e-5);
    QVERIFY(std::fabs(r16->gradNormClipped - 0.5) < 1e-5);
    QVERIFY(!r16->skipped);
    QCOMPARE(t16.lossScale(), 1024.0);
}

void TestPrecision::skippedStepLeavesWeightsAndOptimizerUntouched()
{
    RunConfig config = configFor("fp16-overflow", Precision::FP16);
    Trainer trainer(buildRunSetup(config), config);
    // One clean AdamW step first, so there are moments to keep. The gradients of this regression on
    // prices in dollars are so large that only a scale below 1 keeps them finite in fp16.
    config.controls->lossScaling.initialScale = 0.25;
    trainer.applyControls(*config.controls);
    std::vector<Event> events;
    std::string stop;
    auto first = trainer.computeStep();
    QVERIFY(!first->nonFinite());
    trainer.applyStep(*first, events, stop);
    QVERIFY(!first->skipped);
    // Back to 65536: the scaled gradient into the output (about 6000 x 65536) cannot be fp16.
    config.controls->lossScaling.initialScale = 65536.0;
    trainer.applyControls(*config.controls);
    const auto params = cloneAll(trainer.model().parameters());
    const auto moments = adamMoments(trainer.optimizer());
    QCOMPARE(moments.size(), std::size_t(12));
    auto rec = trainer.computeStep();
    QCOMPARE(rec->lossScale, 65536.0);
    QVERIFY(std::isfinite(rec->loss));
    QCOMPARE(rec->origin.phase, Phase::Backward);
    events.clear();
    trainer.applyStep(*rec, events, stop);
    QVERIFY(rec->skipped);
    QVERIFY(!rec->overflowLayers.empty());
    QVERIFY(sameBits(cloneAll(trainer.model().parameters()), params));
    QVERIFY(sameBits(adamMoments(trainer.optimizer()), moments));
    QCOMPARE(trainer.lossScale(), 32768.0);
    QCOMPARE(trainer.step(), 2);
    QCOMPARE(events.size(), std::size_t(1));
    QVERIFY2(events[0].text.find("scale now 32768") != std::string::npos, events[0].text.c_str());
}

QTEST_GUILESS_MAIN(TestPrecision)
#include "tst_precision.moc"
