// Where a non-finite value comes from in models written by real PyTorch (tests/python_fixtures.py,
// run with Debian's python3-torch): the user's Python file and line in scripted and traced graphs,
// an op in a module's own forward or the root's, the chain from a mask's -Inf to the NaN a softmax
// makes of it, and a causal mask whose -Inf never leaves the attention. Skipped, with the reason,
// without python3-torch (`make test` installs it).
#include "nanscope/input_shape.h"
#include "nanscope/inspect.h"
#include "python_fixture_dir.h"
#include "run_collector.h"

#include <QtTest>

#include <algorithm>

using namespace nanscope;

class TestPythonOrigins : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void originNamesPythonLine_data();
    void originNamesPythonLine();
    void originInTheModelsOwnCode_data();
    void originInTheModelsOwnCode();
    void causalMaskStaysClean_data();
    void causalMaskStaysClean();

private:
    std::string fixture(const char *name) const { return fixtures_.path(QString::fromUtf8(name)); }
    std::string fixture(const QString &name) const { return fixtures_.path(name); }
    testing::PythonFixtureDir fixtures_;
};

void TestPythonOrigins::initTestCase()
{
    bool skip = false;
    const QString why = fixtures_.write(&skip);
    if (skip)
        QSKIP(qPrintable(why));
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestPythonOrigins::originNamesPythonLine_data()
{
    QTest::addColumn<QString>("file");
    QTest::addRow("scripted") << "scripted_log.pt";
    QTest::addRow("traced") << "traced_log.pt";
}

void TestPythonOrigins::originNamesPythonLine()
{
    QFETCH(QString, file);
    QFile lineFile(fixtures_.filePath("log_line"));
    QVERIFY(lineFile.open(QIODevice::ReadOnly));
    const std::string line = lineFile.readAll().trimmed().toStdString();
    QVERIFY2(line.rfind("python_fixtures.py:", 0) == 0, line.c_str());
    RunConfig config;
    config.modelPath = fixture(file.toUtf8().constData());
    config.inputShape = {8, 4};
    const InspectReport r = inspectModel(config);
    const Origin &o = r.record.origin;
    QCOMPARE(int(o.phase), int(Phase::Forward));
    QCOMPARE(o.layerPath, std::string("head"));
    QCOMPARE(o.op, std::string("aten::log"));
    QVERIFY(o.produced);
    QVERIFY2(o.source.size() > line.size() && o.source.compare(o.source.size() - line.size(), line.size(), line) == 0,
             o.source.c_str());
}

void TestPythonOrigins::originInTheModelsOwnCode_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("phase");
    QTest::addColumn<QString>("module");
    QTest::addColumn<QString>("op");  // the start of it: in backward the autograd node
    QTest::addColumn<QString>("lineFile");
    QTest::addColumn<QString>("chainFrom");  // the line the chain starts from, or empty
    // The softmax of a fully masked row makes NaN from the -Inf of masked_fill: the module whose
    // forward holds the softmax is the origin, not the masking.
    QTest::addRow("attention, all-masked row") << "masked_attention.pt"
                                               << "8x5x8" << int(Phase::Forward) << "attn"
                                               << "aten::softmax"
                                               << "softmax"
                                               << "masked_fill";
    QTest::addRow("root's own op, forward") << "root_forward_nan.pt"
                                            << "8x4" << int(Phase::Forward) << ""
                                            << "aten::sqrt"
                                            << "root_forward_nan.line"
                                            << "";
    QTest::addRow("root's own op, backward") << "root_backward_nan.pt"
                                             << "8x4" << int(Phase::Backward) << ""
                                             << "SqrtBackward0"
                                             << "root_backward_nan.line"
                                             << "";
}

void TestPythonOrigins::originInTheModelsOwnCode()
{
    QFETCH(QString, file);
    QFETCH(QString, shape);
    QFETCH(int, phase);
    QFETCH(QString, module);
    QFETCH(QString, op);
    QFETCH(QString, lineFile);
    QFETCH(QString, chainFrom);
    // "name<TAB>python_fixtures.py:N" lines, or one "python_fixtures.py:N".
    auto lineOf = [this](const QString &key) {
        QFile f(fixtures_.filePath(key.endsWith(".line") ? key : "masked_attention.lines"));
        if (!f.open(QIODevice::ReadOnly))
            return QString();
        for (const QByteArray &line : f.readAll().split('\n')) {
            const QList<QByteArray> cols = line.trimmed().split('\t');
            if (cols.size() == 1 && key.endsWith(".line"))
                return QString::fromUtf8(cols[0]);
            if (cols.size() == 2 && cols[0] == key.toUtf8())
                return QString::fromUtf8(cols[1]);
        }
        return QString();
    };
    const QString line = lineOf(lineFile);
    QVERIFY2(line.startsWith("python_fixtures.py:"), qPrintable(line));
    RunConfig config;
    config.modelPath = fixture(file);
    config.inputShape = *parseInputShape(shape.toStdString());
    const InspectReport r = inspectModel(config);
    const Origin &o = r.record.origin;
    QCOMPARE(int(o.phase), phase);
    QCOMPARE(QString::fromStdString(o.layerPath), module);
    // The id of the module named in the model's own layer table (the root, "", is 0).
    const auto named = std::find_if(r.layers.begin(), r.layers.end(),
                                    [&](const Layer &l) { return l.path == module.toStdString(); });
    QVERIFY2(named != r.layers.end(), qPrintable(module));
    QCOMPARE(o.layer, named->id);
    QVERIFY2(QString::fromStdString(o.op).startsWith(op), o.op.c_str());
    QVERIFY2(QString::fromStdString(o.source).endsWith("/" + line), o.source.c_str());
    if (chainFrom.isEmpty())
        return;
    const QString chain = QString::fromStdString(o.chain);
    const QString expected = "-Inf from aten::masked_fill at .*/" + QRegularExpression::escape(lineOf(chainFrom)) +
                             " became NaN in aten::softmax at .*/" + QRegularExpression::escape(line);
    QVERIFY2(QRegularExpression("^" + expected + "$").match(chain).hasMatch(), qPrintable(chain));
    QVERIFY2(QString::fromStdString(o.explanation).contains(chain), o.explanation.c_str());
}

// The mask's -Inf never leaves the attention: 50 steps without a non-finite step or a forecast,
// in each precision the README claims.
void TestPythonOrigins::causalMaskStaysClean_data()
{
    QTest::addColumn<int>("precision");
    QTest::newRow("fp32") << int(Precision::FP32);
    QTest::newRow("fp16") << int(Precision::FP16);
    QTest::newRow("bf16") << int(Precision::BF16);
}

void TestPythonOrigins::causalMaskStaysClean()
{
    QFETCH(int, precision);
    RunConfig config;
    config.modelPath = fixture("causal_transformer.pt");
    config.inputShape = {8, 6, 8};
    config.loss = "mse";
    config.steps = 50;
    Controls c = initialControls(config);
    c.precision = Precision(precision);
    config.controls = c;
    const auto run = runToEnd(config);
    QVERIFY2(run->summary.error.empty(), run->summary.error.c_str());
    QCOMPARE(run->summary.stepsRun, 50);
    QCOMPARE(run->summary.firstNonFiniteStep, -1);
    QCOMPARE(run->summary.nonFiniteSteps, 0);
    for (const StepRecordPtr &r : run->records)
        QVERIFY(r->layers[3].forward.present);  // enc.self_attn, whose output is a tuple
    for (const Event &e : run->events)          // a healthy model raises no overflow forecast
        QVERIFY2(e.kind != EventKind::Warning, e.text.c_str());
}

QTEST_GUILESS_MAIN(TestPythonOrigins)
#include "tst_python_origins.moc"
