// User TorchScript models: loading errors, the weight scan, instrumentation (paths, coverage,
// exactness) and origins, on fixtures the tests build themselves.
#include "probe/op_tracer.h"
#include "rules/origin.h"
#include "probe/probe.h"
#include "probed_pass.h"
#include "nanscope/inspect.h"
#include "torchscript_fixtures.h"
#include "model/torchscript_loader.h"
#include "model/model_setup.h"
#include "model/torchscript_model.h"

#include <torch/torch.h>

#include "health_compare.h"  // Qt: after LibTorch, whose headers Qt's `slots` macro breaks

#include <QtTest>

#include <filesystem>

using namespace nanscope;

namespace {

struct Fixtures {
    QTemporaryDir dir;
    std::string path(const std::string &name) const { return dir.filePath(QString::fromStdString(name)).toStdString(); }
    std::string model(const std::string &kind)
    {
        const std::string p = path(kind + ".pt");
        if (!std::filesystem::exists(p))
            fixtures::writeModel(kind, p);
        return p;
    }
};

struct ProbedStep {
    StepRecord record;
    std::vector<int> forwardOrder;
    at::Tensor output;
};

// One probed forward and backward of `loss = cross_entropy(out, labels)` (as the trainer runs it).
ProbedStep probedStep(TorchScriptModel &model, const at::Tensor &x, bool devicePath = false)
{
    ProbedStep s;
    Probe probe;
    probe.setDevicePathOnCpu(devicePath);
    probe.beginStep(model, &s.record);
    probe.observeParameters(model);
    s.output = model.forward(x, &probe);
    const at::Tensor logits = s.output.reshape({-1, s.output.size(-1)});
    const at::Tensor labels = torch::zeros({logits.size(0)}, torch::kLong);
    const at::Tensor loss = torch::nn::functional::cross_entropy(logits, labels);
    probe.observeLoss(loss);
    loss.backward();
    probe.observeParameterGradients(model);
    probe.finishStep();
    s.forwardOrder = probe.forwardOrder();
    return s;
}

int layerId(const TorchScriptModel &m, const std::string &path)
{
    for (const Layer &l : m.layers())
        if (l.path == path)
            return l.id;
    return -1;
}

std::vector<at::Tensor> gradsAndZero(const TorchScriptModel &m)
{
    std::vector<at::Tensor> out;
    for (const at::Tensor &p : m.parameters()) {
        out.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
        if (p.grad().defined())
            p.mutable_grad().zero_();
    }
    return out;
}

}  // namespace

class TestTorchScript : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void badFile_data();
    void badFile();
    void nonFiniteWeightsNamed();
    void layerTableIsNamedModules();
    void everyModuleInstanceObserved_data();
    void everyModuleInstanceObserved();
    void instrumentedEqualsOriginal_data();
    void instrumentedEqualsOriginal();
    void forwardNanOriginNamesLayerAndOp();
    void backwardOnlyNanOrigin();
    void backwardNodeToForwardOp();
    void inputShapeGuess();
    void fp16EmulationRoundsModuleOutputs();
    void devicePathAgreesWithHostScan_data();
    void devicePathAgreesWithHostScan();

private:
    Fixtures f_;
};

void TestTorchScript::badFile_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected");
    QTest::addRow("missing") << "missing"
                             << "no such file";
    QTest::addRow("empty") << "empty"
                           << "the file is empty";
    QTest::addRow("truncated") << "truncated"
                               << "truncated or corrupt";
    QTest::addRow("not-zip") << "not-zip"
                             << "not a TorchScript file";
    QTest::addRow("random") << "random"
                            << "not a TorchScript file";
    QTest::addRow("newer-version") << "newer-version"
                                   << "written by a newer PyTorch";
}

void TestTorchScript::badFile()
{
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    const std::string path = f_.path(kind.toStdString() + ".pt");
    if (kind != "missing")
        fixtures::writeBadFile(kind.toStdString(), path);
    std::string message;
    try {
        loadTorchScript(path);
    } catch (const ModelFileError &e) {
        message = e.what();
    }
    QVERIFY2(message.find(expected.toStdString()) != std::string::npos, message.c_str());
    QVERIFY2(message.find(path) != std::string::npos, message.c_str());
    QVERIFY2(message.find('\n') == std::string::npos, message.c_str());
}

void TestTorchScript::nonFiniteWeightsNamed()
{
    const auto bad = scanNonFiniteState(loadTorchScript(f_.model("bad-weights")));
    QCOMPARE(int(bad.size()), 2);
    QCOMPARE(bad[0].name, std::string("fc.weight"));
    QVERIFY(!bad[0].buffer);
    QCOMPARE(bad[0].health.nan, std::int64_t(2));
    QCOMPARE(bad[0].health.posInf, std::int64_t(1));
    QCOMPARE(bad[0].health.numel, std::int64_t(12));
    QCOMPARE(bad[1].name, std::string("stats"));
    QVERIFY(bad[1].buffer);
    QCOMPARE(bad[1].health.negInf, std::int64_t(1));
    QVERIFY(scanNonFiniteState(loadTorchScript(f_.model("nested"))).empty());
}

void TestTorchScript::layerTableIsNamedModules()
{
    TorchScriptModel m(loadTorchScript(f_.model("nested")));
    std::vector<std::string> paths;
    for (const Layer &l : m.layers())
        paths.push_back(l.path);
    const std::vector<std::string> expected = {"",          "stem",          "gate",          "blocks",
                                               "blocks.b0", "blocks.b0.fc1", "blocks.b0.act", "blocks.b0.fc2",
                                               "blocks.b1", "blocks.b1.fc1", "blocks.b1.act", "blocks.b1.fc2",
                                               "head"};
    QCOMPARE(paths, expected);
    QCOMPARE(m.layers()[layerId(m, "blocks.b1.fc2")].type, std::string("Linear"));
    QCOMPARE(m.layers()[layerId(m, "blocks.b1")].type, std::string("Block"));
    QCOMPARE(m.layers()[layerId(m, "blocks.b1.fc2")].parent, layerId(m, "blocks.b1"));
    QCOMPARE(m.layers()[0].parent, -1);
    QCOMPARE(int(m.layerParameters(layerId(m, "blocks.b0.fc1")).size()), 2);
    QCOMPARE(int(m.layerParameters(layerId(m, "blocks.b0")).size()), 0);
}

void TestTorchScript::everyModuleInstanceObserved_data()
{
    QTest::addColumn<bool>("sequence");
    QTest::addRow("[6,4]") << false;
    // [6,5,4]: linear runs as matmul then an in-place add_ of the bias, then relu_ on top.
    QTest::addRow("[6,5,4]") << true;
}

void TestTorchScript::everyModuleInstanceObserved()
{
    QFETCH(bool, sequence);
    TorchScriptModel m(loadTorchScript(f_.model("nested")));
    m.setTraining(true);
    torch::manual_seed(5);
    const std::int64_t rows = sequence ? 6 * 5 : 6;
    const ProbedStep s = probedStep(m, sequence ? torch::randn({6, 5, 4}) : torch::randn({6, 4}));
    for (const Layer &l : m.layers()) {
        const LayerHealth &h = s.record.layers[l.id];
        QVERIFY2(h.forward.present && h.forward.numel > 0, l.path.c_str());
        QVERIFY2(h.grad.present && h.grad.numel > 0, l.path.c_str());
        QVERIFY2(!h.forward.hasNonFinite() && !h.grad.hasNonFinite(), l.path.c_str());
    }
    // The loop calls `blocks` twice: both calls are in its map; `gate` runs inside an `if`.
    QCOMPARE(s.record.layers[layerId(m, "blocks.b1.fc2")].forward.numel, 2 * rows * 8);
    QCOMPARE(s.record.layers[layerId(m, "gate")].forward.numel, rows * 8);
    QCOMPARE(s.record.layers[layerId(m, "")].forward.numel, rows * 3);
    // The gradient into fc2's output (before the residual add_) is the block's own gradient:
    // add_ passes it through unchanged, so both see the same values.
    QCOMPARE(s.record.layers[layerId(m, "blocks.b0.fc2")].grad.finiteL2,
             s.record.layers[layerId(m, "blocks.b0")].grad.finiteL2);
    // relu_ zeroes the gradient where its input was negative, so the gradient into fc1's output
    // (read before relu_ rewrote it) is smaller than the one into act's output.
    QVERIFY(s.record.layers[layerId(m, "blocks.b0.fc1")].grad.finiteL2 <
            s.record.layers[layerId(m, "blocks.b0.act")].grad.finiteL2);
    QVERIFY(s.record.layers[layerId(m, "head")].paramGrads.present);
    // After relu_ (in place) nothing is negative.
    QVERIFY(s.record.layers[layerId(m, "blocks.b0.act")].forward.min >= 0.0);
    // Forward order: children before the module that contains them.
    const auto pos = [&](const std::string &p) {
        return std::find(s.forwardOrder.begin(), s.forwardOrder.end(), layerId(m, p)) - s.forwardOrder.begin();
    };
    QVERIFY(pos("stem") < pos("gate"));
    QVERIFY(pos("blocks.b0.fc1") < pos("blocks.b0.act"));
    QVERIFY(pos("blocks.b0.fc2") < pos("blocks.b0"));
    QVERIFY(pos("blocks.b1") < pos("blocks"));
    QVERIFY(pos("blocks") < pos("head"));
}

void TestTorchScript::instrumentedEqualsOriginal_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("shape");
    QTest::addRow("nested") << "nested"
                            << "5x4";
    QTest::addRow("nested [5,3,4]") << "nested"
                                    << "5x3x4";  // linear's output is a view, rewritten in place
    QTest::addRow("cnn") << "cnn"
                         << "2x3x16x16";
}

void TestTorchScript::instrumentedEqualsOriginal()
{
    QFETCH(QString, kind);
    QFETCH(QString, shape);
    TorchScriptModel m(loadTorchScript(f_.model(kind.toStdString())));
    m.setTraining(false);  // eval: BatchNorm's running statistics do not move between the two runs
    torch::manual_seed(9);
    const at::Tensor x = shape == "5x4"     ? torch::randn({5, 4})
                         : shape == "5x3x4" ? torch::randn({5, 3, 4})
                                            : torch::randn({2, 3, 16, 16});
    for (int run = 0; run < 3; ++run) {  // the executor optimises after its first runs
        const at::Tensor plain = m.forward(x, nullptr);
        plain.pow(2).sum().backward();
        const std::vector<at::Tensor> plainGrads = gradsAndZero(m);
        StepRecord rec;
        const at::Tensor probed = testing::probedPass(m, x, rec).output;
        const std::vector<at::Tensor> probedGrads = gradsAndZero(m);
        QVERIFY(torch::equal(plain, probed));
        QCOMPARE(plainGrads.size(), probedGrads.size());
        for (std::size_t i = 0; i < plainGrads.size(); ++i)
            QVERIFY(torch::equal(plainGrads[i], probedGrads[i]));
        QVERIFY(rec.layers[0].forward.present);
    }
    QVERIFY(m.observeOps() >= int(m.layers().size()) - 1);
}

void TestTorchScript::forwardNanOriginNamesLayerAndOp()
{
    TorchScriptModel m(loadTorchScript(f_.model("forward-nan")));
    torch::manual_seed(2);
    const at::Tensor x = torch::randn({8, 4});
    const ProbedStep s = probedStep(m, x);
    const Origin o = findOrigin({s.record, m.layers(), s.forwardOrder, true});
    QCOMPARE(int(o.phase), int(Phase::Forward));
    QCOMPARE(o.layerPath, std::string("logp"));
    QVERIFY(o.produced);
    QVERIFY(s.record.layers[layerId(m, "logp")].forward.nan > 0);
    QCOMPARE(s.record.layers[layerId(m, "fc")].forward.nonFinite(), std::int64_t(0));
    TracedOp traced;
    {
        OpTracer tracer;
        m.forward(x, nullptr).sum().backward();
        traced = tracer.result();
    }
    QVERIFY(traced.found);
    QCOMPARE(traced.op, std::string("aten::log"));
    QVERIFY(!traced.inBackward);
}

void TestTorchScript::backwardOnlyNanOrigin()
{
    TorchScriptModel m(loadTorchScript(f_.model("backward-nan")));
    torch::manual_seed(2);
    const at::Tensor x = torch::randn({8, 4});
    const ProbedStep s = probedStep(m, x);
    for (const LayerHealth &h : s.record.layers)
        QVERIFY(!h.forward.hasNonFinite());
    QVERIFY(!s.record.lossHealth.hasNonFinite());
    QVERIFY(s.record.layers[layerId(m, "fc")].grad.nan > 0);
    QCOMPARE(s.record.layers[layerId(m, "root")].grad.nonFinite(), std::int64_t(0));
    const Origin o = findOrigin({s.record, m.layers(), s.forwardOrder, true});
    QCOMPARE(int(o.phase), int(Phase::Backward));
    QCOMPARE(o.layerPath, std::string("root"));
    TracedOp traced;
    {
        OpTracer tracer;
        torch::nn::functional::cross_entropy(m.forward(x, nullptr), torch::zeros({8}, torch::kLong)).backward();
        traced = tracer.result();
    }
    QVERIFY(traced.inBackward);
    QCOMPARE(traced.op, std::string("SqrtBackward0"));
}

void TestTorchScript::devicePathAgreesWithHostScan_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("shape");
    QTest::addRow("nested [6,5,4]") << "nested"
                                    << "6x5x4";  // gradients read through a view's base
    QTest::addRow("cnn") << "cnn"
                         << "2x3x16x16";
    QTest::addRow("forward-nan") << "forward-nan"
                                 << "8x4";
    QTest::addRow("backward-nan") << "backward-nan"
                                  << "8x4";
}

void TestTorchScript::devicePathAgreesWithHostScan()
{
    // The statistics a CUDA run keeps on the device until the end of the step, here on the CPU:
    // every slot the hooks fill (re-observed outputs, views' bases, shared pre-hooks) must come
    // out as the host scan fills it.
    QFETCH(QString, kind);
    QFETCH(QString, shape);
    TorchScriptModel m(loadTorchScript(f_.model(kind.toStdString())));
    m.setTraining(false);  // BatchNorm's running statistics do not move between the two passes
    torch::manual_seed(4);
    const at::Tensor x = shape == "6x5x4" ? torch::randn({6, 5, 4})
                         : shape == "8x4" ? torch::randn({8, 4})
                                          : torch::randn({2, 3, 16, 16});
    const ProbedStep host = probedStep(m, x);
    gradsAndZero(m);
    const ProbedStep device = probedStep(m, x, true);
    QVERIFY(device.forwardOrder == host.forwardOrder);
    QVERIFY(testing::healthDiff(host.record.lossHealth, device.record.lossHealth).isEmpty());
    for (const Layer &l : m.layers()) {
        const QString diff = testing::layerHealthDiff(host.record.layers[l.id], device.record.layers[l.id]);
        QVERIFY2(diff.isEmpty(), (l.path + " ").c_str() + diff.toUtf8());
    }
}

void TestTorchScript::backwardNodeToForwardOp()
{
    QCOMPARE(forwardOpOfBackwardNode("SqrtBackward0"), std::string("aten::sqrt"));
    QCOMPARE(forwardOpOfBackwardNode("NativeBatchNormBackward0"), std::string("aten::native_batch_norm"));
    QCOMPARE(forwardOpOfBackwardNode("aten::log"), std::string());
}

void TestTorchScript::inputShapeGuess()
{
    const InputGuess cnn = guessInputShape(f_.model("cnn"));
    QCOMPARE(cnn.shape, (std::vector<std::int64_t>{8, 3, 64, 64}));
    QVERIFY2(cnn.note.find("'conv1' (Conv2d)") != std::string::npos, cnn.note.c_str());
    QCOMPARE(guessInputShape(f_.model("nested")).shape, (std::vector<std::int64_t>{8, 4}));
    const InputGuess pair = guessInputShape(f_.model("two-inputs"));
    QCOMPARE(pair.inputNames, (std::vector<std::string>{"x", "mask"}));
    QCOMPARE(int(pair.requiredInputs), 2);
}

void TestTorchScript::fp16EmulationRoundsModuleOutputs()
{
    TorchScriptModel m(loadTorchScript(f_.model("nested")));
    m.setTraining(false);
    torch::manual_seed(4);
    const at::Tensor small = torch::randn({6, 4});
    const at::Tensor original = m.forward(small, nullptr);
    QVERIFY(m.setHalfEmulation(true));
    // Small values: fp16 rounding only (about 3 decimal digits), with and without a probe alike.
    const at::Tensor emulated = m.forward(small, nullptr);
    QVERIFY(!torch::equal(emulated, original));
    QVERIFY(torch::allclose(emulated, original, 1e-2, 1e-2));
    StepRecord rec;
    const at::Tensor probed = testing::probedPass(m, small, rec).output;
    QVERIFY(torch::equal(probed, emulated));
    // What the stem hands on is what fp16 holds: every observed output is exactly representable.
    const at::Tensor half = probed.to(at::kHalf).to(at::kFloat);
    QVERIFY(torch::equal(half, probed));
    for (const Layer &l : m.layers())
        QVERIFY2(rec.layers[l.id].grad.present, l.path.c_str());
    // Large inputs: the stem's output passes 65504 and turns to Inf, as on a GPU; it is the origin.
    const at::Tensor large = small * 1e5;
    QVERIFY(torch::isfinite(m.forward(large, nullptr)).all().item<bool>() == false);
    StepRecord big;
    const std::vector<int> order = testing::probedPass(m, large, big, /*backward=*/false).forwardOrder;
    QVERIFY(big.layers[layerId(m, "stem")].forward.posInf + big.layers[layerId(m, "stem")].forward.negInf > 0);
    const Origin o = findOrigin({big, m.layers(), order, true});
    QCOMPARE(o.layerPath, std::string("stem"));
    QVERIFY(o.produced);
    // Off again: the model's own forward, unrounded and finite.
    QVERIFY(m.setHalfEmulation(false));
    QVERIFY(torch::equal(m.forward(small, nullptr), original));
    QVERIFY(torch::isfinite(m.forward(large, nullptr)).all().item<bool>());
}

QTEST_GUILESS_MAIN(TestTorchScript)
#include "tst_torchscript.moc"
