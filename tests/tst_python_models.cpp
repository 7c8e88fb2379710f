// Models written by real PyTorch (tests/python_fixtures.py, run with Debian's python3-torch): a
// traced ResNet whose layer table must be Python's named_modules() and whose instrumented output
// must equal Python's, a trained model that Python loads back, and the shapes of models people
// write (tuple and dict outputs, token ids, two inputs, a model that returns its own loss).
// Where non-finite values come from in them: tst_python_origins. Skipped, with the reason,
// without python3-torch (`make test` installs it).
#include "model/model_inputs.h"
#include "model/model_setup.h"
#include "nanscope/input_shape.h"
#include "nanscope/inspect.h"
#include "probed_pass.h"
#include "python_fixture_dir.h"
#include "run_collector.h"
#include "model/torchscript_loader.h"
#include "model/torchscript_model.h"

#include <torch/torch.h>

#include <QtTest>

#include <cmath>

using namespace nanscope;

namespace {

int layerId(const TorchScriptModel &m, const std::string &path)
{
    for (const Layer &l : m.layers())
        if (l.path == path)
            return l.id;
    return -1;
}

const LayerHealth &healthOf(const InspectReport &r, const std::string &path)
{
    for (const Layer &l : r.layers)
        if (l.path == path)
            return r.record.layers[l.id];
    throw std::runtime_error("no layer " + path);
}

}  // namespace

class TestPythonModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void tracedLayerTableIsNamedModules();
    void tracedInstrumentedOutputEqualsPython();
    void trainedTracedModelLoadsInPython();
    void tupleOutputsAreObserved_data();
    void tupleOutputsAreObserved();
    void languageModelTrainsOnTokenFile();
    void nextTokenOfASequence();
    void dictOutputTrainsTheNamedHead_data();
    void dictOutputTrainsTheNamedHead();
    void twoInputs_data();
    void twoInputs();
    void modelReturnsItsOwnLoss();

private:
    std::string fixture(const char *name) const { return fixtures_.path(QString::fromUtf8(name)); }
    std::string fixture(const QString &name) const { return fixtures_.path(name); }
    std::vector<std::int64_t> numbersIn(const char *name) const;
    testing::PythonFixtureDir fixtures_;
};

void TestPythonModels::initTestCase()
{
    bool skip = false;
    const QString why = fixtures_.write(&skip);
    if (skip)
        QSKIP(qPrintable(why));
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestPythonModels::tracedLayerTableIsNamedModules()
{
    QFile modules(fixtures_.filePath("traced_resnet.modules"));
    QVERIFY(modules.open(QIODevice::ReadOnly | QIODevice::Text));
    std::vector<std::pair<std::string, std::string>> expected;
    for (const QByteArray &line : modules.readAll().split('\n')) {
        const QList<QByteArray> cols = line.split('\t');
        if (cols.size() == 2)
            expected.emplace_back(cols[0].toStdString(), cols[1].toStdString());
    }
    QCOMPARE(int(expected.size()), 20);
    TorchScriptModel m(loadTorchScript(fixture("traced_resnet.pt")));
    std::vector<std::pair<std::string, std::string>> actual;
    for (const Layer &l : m.layers())
        actual.emplace_back(l.path, l.type);
    QCOMPARE(actual, expected);
    QCOMPARE(m.layers()[layerId(m, "layer1.1.conv2")].parent, layerId(m, "layer1.1"));
    QCOMPARE(int(m.layerParameters(layerId(m, "layer1.0.bn1")).size()), 2);
}

void TestPythonModels::tracedInstrumentedOutputEqualsPython()
{
    TorchScriptModel m(loadTorchScript(fixture("traced_resnet.pt")));
    m.setTraining(true);
    const at::Tensor x = loadTensorFile(fixture("traced_resnet.input.pt"), "input");
    const at::Tensor expected = loadTensorFile(fixture("traced_resnet.output.pt"), "output");
    StepRecord rec;
    const at::Tensor out = testing::probedPass(m, x, rec).output;
    // The same libtorch runs both sides; allow for a different thread split of the reductions.
    QVERIFY(torch::allclose(out, expected, 1e-5, 1e-6));
    for (const Layer &l : m.layers()) {
        const LayerHealth &h = rec.layers[l.id];
        QVERIFY2(h.forward.present && h.grad.present, l.path.c_str());
        QVERIFY2(!h.forward.hasNonFinite() && !h.grad.hasNonFinite(), l.path.c_str());
    }
    // One ReLU module per block, called twice (after bn1 and after the residual add).
    const std::int64_t map = 8 * 8 * 16 * 16;
    QCOMPARE(rec.layers[layerId(m, "layer1.0.relu")].forward.numel, 2 * map);
    QCOMPARE(rec.layers[layerId(m, "stem.2")].forward.numel, map);
    QCOMPARE(rec.layers[layerId(m, "fc")].forward.numel, std::int64_t(8 * 10));
    QVERIFY(rec.layers[layerId(m, "layer1.1.relu")].forward.min >= 0.0);
}

void TestPythonModels::trainedTracedModelLoadsInPython()
{
    RunConfig config;
    config.modelPath = fixture("traced_resnet.pt");
    config.inputShape = {8, 3, 16, 16};
    config.steps = 4;
    config.savePath = fixture("trained.pt");
    const auto run = runToEnd(config);
    QVERIFY2(run->summary.error.empty(), run->summary.error.c_str());
    QCOMPARE(run->summary.stepsRun, 4);
    QCOMPARE(int(run->records.size()), 4);
    for (const StepRecordPtr &r : run->records)
        QVERIFY(std::isfinite(r->loss));
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(fixtures_.python(),
            {QStringLiteral(NANSCOPE_PYTHON_FIXTURES), "--check", QString::fromStdString(config.savePath)});
    QVERIFY(p.waitForFinished(120000));
    const QByteArray out = p.readAll().trimmed();
    // stem 3*8*9+8 + 2*8, two blocks of 2 * (8*8*9 + 2*8), fc 8*10+10
    QCOMPARE(out, QByteArray("ok 2698 finite"));
}

std::vector<std::int64_t> TestPythonModels::numbersIn(const char *name) const
{
    QFile f(fixtures_.filePath(name));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    std::vector<std::int64_t> out;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (!line.trimmed().isEmpty())
            out.push_back(line.trimmed().toLongLong());
    return out;
}

void TestPythonModels::tupleOutputsAreObserved_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("shape");
    QTest::addColumn<bool>("tokens");
    QTest::addColumn<QString>("layer");
    QTest::addColumn<QString>("shapesFile");  // numel of each tensor the module returns, the first trained on
    QTest::addRow("LSTM: (output, (h, c))") << "lstm_lm.pt"
                                            << "8x12" << true << "lstm"
                                            << "lstm_lm.shapes";
    QTest::addRow("MultiheadAttention: (output, weights)") << "mha.pt"
                                                           << "8x5x8" << false << "mha"
                                                           << "mha.shapes";
}

void TestPythonModels::tupleOutputsAreObserved()
{
    QFETCH(QString, file);
    QFETCH(QString, shape);
    QFETCH(bool, tokens);
    QFETCH(QString, layer);
    QFETCH(QString, shapesFile);
    const std::vector<std::int64_t> numels = numbersIn(shapesFile.toUtf8().constData());
    QVERIFY(numels.size() >= 2);
    RunConfig config;
    config.modelPath = fixture(file);
    config.inputShape = *parseInputShape(shape.toStdString());
    config.tokenIds = tokens;
    const InspectReport r = inspectModel(config);
    const LayerHealth &h = healthOf(r, layer.toStdString());
    QVERIFY(h.forward.present && h.grad.present);
    std::int64_t all = 0;
    for (std::int64_t n : numels)
        all += n;
    QCOMPARE(h.forward.numel, all);
    // Only the first output is used downstream: the others get no gradient.
    QCOMPARE(h.grad.numel, numels[0]);
    QVERIFY(!h.forward.hasNonFinite() && !h.grad.hasNonFinite());
}

void TestPythonModels::languageModelTrainsOnTokenFile()
{
    RunConfig config;
    config.modelPath = fixture("lstm_lm.pt");
    config.inputsPath = fixture("lstm_tokens.pt");
    config.inputShape = {8};  // the batch
    config.steps = 24;
    config.optimizer.kind = OptimizerKind::Adam;
    Controls controls = defaultControls(config);
    controls.learningRate = 0.03;
    config.controls = controls;
    const auto run = runToEnd(config);
    QVERIFY2(run->summary.error.empty(), run->summary.error.c_str());
    QCOMPARE(run->summary.stepsRun, 24);
    for (const StepRecordPtr &r : run->records) {
        QVERIFY(std::isfinite(r->loss));
        QVERIFY(r->layers[2].grad.present);  // lstm, after the root and embed
    }
    // Next-token targets: an untrained model's loss is near log(50) = 3.9; the token file counts up
    // by 3, which Adam learns within these steps (a Python loop of the same model reaches 0.6).
    const double first = run->records.front()->loss;
    double last = 0;
    for (std::size_t i = run->records.size() - 4; i < run->records.size(); ++i)
        last += run->records[i]->loss / 4;
    QVERIFY2(std::abs(first - std::log(50.0)) < 0.3, qPrintable(QString::number(first)));
    QVERIFY2(last < first - 1.5, qPrintable(QStringLiteral("%1 -> %2").arg(first).arg(last)));
}

void TestPythonModels::nextTokenOfASequence()
{
    // Scores [batch, vocab] for token ids [batch, 12]: the model reads the first 11 tokens and
    // learns the 12th.
    RunConfig config;
    config.modelPath = fixture("next_token.pt");
    config.inputShape = {8, 12};
    config.tokenIds = true;
    const InspectReport r = inspectModel(config);
    QCOMPARE(healthOf(r, "embed").forward.numel, std::int64_t(8 * 11 * 16));
    QVERIFY2(std::abs(r.record.loss - std::log(50.0)) < 0.5, qPrintable(QString::number(r.record.loss)));
}

void TestPythonModels::dictOutputTrainsTheNamedHead_data()
{
    QTest::addColumn<QString>("output");
    QTest::addColumn<QString>("trained");
    QTest::addColumn<QString>("untrained");
    QTest::addRow("first (logits)") << ""
                                    << "fc"
                                    << "aux";
    QTest::addRow("--output aux") << "aux"
                                  << "aux"
                                  << "fc";
}

void TestPythonModels::dictOutputTrainsTheNamedHead()
{
    QFETCH(QString, output);
    QFETCH(QString, trained);
    QFETCH(QString, untrained);
    RunConfig config;
    config.modelPath = fixture("dict_output.pt");
    config.inputShape = {8, 4};
    config.output = output.toStdString();
    const InspectReport r = inspectModel(config);
    QCOMPARE(healthOf(r, "").forward.numel, std::int64_t(8 * 3 + 8 * 2));  // the root returns both heads
    QVERIFY(healthOf(r, trained.toStdString()).grad.present);
    QVERIFY(!healthOf(r, untrained.toStdString()).grad.present);
    QVERIFY(std::isfinite(r.record.loss));
}

void TestPythonModels::twoInputs_data()
{
    QTest::addColumn<QStringList>("shapes");
    QTest::addColumn<QStringList>("files");
    QTest::addRow("two shapes") << QStringList{"8x4", "8x4"} << QStringList{};
    QTest::addRow("a file holding a tuple") << QStringList{} << QStringList{"two_inputs.both.pt"};
    QTest::addRow("a file per input") << QStringList{} << QStringList{"two_inputs.x.pt", "two_inputs.mask.pt"};
}

void TestPythonModels::twoInputs()
{
    QFETCH(QStringList, shapes);
    QFETCH(QStringList, files);
    RunConfig config;
    config.modelPath = fixture("two_inputs.pt");
    config.steps = 3;
    for (int i = 0; i < shapes.size(); ++i) {
        const auto shape = *parseInputShape(shapes[i].toStdString());
        if (i == 0)
            config.inputShape = shape;
        else
            config.sideInputs.push_back(SideInput{shape, "float32", ""});
    }
    for (int i = 0; i < files.size(); ++i) {
        if (i == 0)
            config.inputsPath = fixture(files[i]);
        else
            config.sideInputs.push_back(SideInput{{}, "float32", fixture(files[i])});
    }
    const auto run = runToEnd(config);
    QVERIFY2(run->summary.error.empty(), run->summary.error.c_str());
    QCOMPARE(run->summary.stepsRun, 3);
    // fc reads x * mask: [batch, 4] in, [batch, 3] out; the file's batch is 32 samples (4 per mask row).
    const std::int64_t batch = files.isEmpty() ? 8 : 32;
    QCOMPARE(run->records.front()->layers[1].forward.numel, batch * 3);
    if (files.size() == 1) {  // the same data as two files: the same losses
        RunConfig two = config;
        two.inputsPath = fixture("two_inputs.x.pt");
        two.sideInputs = {SideInput{{}, "float32", fixture("two_inputs.mask.pt")}};
        const auto other = runToEnd(two);
        QCOMPARE(other->records.back()->loss, run->records.back()->loss);
    }
}

void TestPythonModels::modelReturnsItsOwnLoss()
{
    RunConfig config;
    config.modelPath = fixture("model_loss.pt");
    config.inputShape = {8, 4};
    config.loss = "model";
    config.steps = 20;
    const auto run = runToEnd(config);
    QVERIFY2(run->summary.error.empty(), run->summary.error.c_str());
    // The model's loss is the mean square of fc's output: training drives it down.
    QVERIFY(run->records.back()->loss < 0.8 * run->records.front()->loss);
    config.loss = "cross-entropy";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, inspectModel(config));
}

QTEST_GUILESS_MAIN(TestPythonModels)
#include "tst_python_models.moc"
