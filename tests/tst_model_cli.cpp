// The command line on user TorchScript files: inspect (text and JSON), run --model with --save,
// bench --model, data from tensor files, and one-line errors for bad files and shapes.
#include "cli.h"
#include "cli_runner.h"
#include "torchscript_fixtures.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <sstream>

using namespace nanscope;

namespace {

using testing::Output;
using testing::run;

QJsonObject layer(const QJsonObject &inspect, const QString &path)
{
    for (const QJsonValue &v : inspect.value(QStringLiteral("layers")).toArray())
        if (v.toObject().value(QStringLiteral("path")).toString() == path)
            return v.toObject();
    return {};
}

}  // namespace

class TestModelCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void inspectForwardNan();
    void inspectBackwardOnlyNan();
    void inspectCleanNestedModel();
    void inspectTextTable();
    void inspectReportsBadWeights();
    void badFile_data();
    void badFile();
    void wrongShapeSaysWhatWasExpected();
    void tensorFiles();
    void wrongTargets();
    void tokenIds();
    void runSavesAModelThatInspectReadsAgain();
    void runWithRecoveryOnForwardNan();
    void runInEmulatedFp16();
    void benchModel();

private:
    QString file(const QString &name) const { return dir_.filePath(name); }
    QString model(const char *kind) const { return file(QString::fromLatin1(kind) + QStringLiteral(".pt")); }
    QTemporaryDir dir_;
};

void TestModelCli::initTestCase()
{
    QVERIFY(dir_.isValid());
    for (const char *kind : {"nested", "forward-nan", "backward-nan", "bad-weights", "two-inputs", "token-lm"})
        fixtures::writeModel(kind, model(kind).toStdString());
}

void TestModelCli::inspectForwardNan()
{
    const Output o = run({"inspect", model("forward-nan"), "--input-shape", "8x4", "--json"});
    QCOMPARE(o.code, 0);
    QCOMPARE(o.objects.size(), 1);
    const QJsonObject j = o.objects[0];
    QCOMPARE(j.value("type").toString(), QStringLiteral("inspect"));
    QCOMPARE(j.value("layers").toArray().size(), 3);
    const QJsonObject logp = layer(j, "logp");
    QCOMPARE(logp.value("type").toString(), QStringLiteral("Log"));
    QVERIFY(logp.value("forward").toObject().value("nan").toInt() > 0);
    QCOMPARE(logp.value("forward").toObject().value("numel").toInt(), 8 * 3);
    QCOMPARE(layer(j, "fc").value("forward").toObject().value("nan").toInt(), 0);
    QVERIFY(layer(j, "fc").value("params").isObject());
    QVERIFY(logp.value("params").isNull());
    const QJsonObject origin = j.value("origin").toObject();
    QCOMPARE(origin.value("phase").toString(), QStringLiteral("forward"));
    QCOMPARE(origin.value("layer").toString(), QStringLiteral("logp"));
    QCOMPARE(origin.value("op").toString(), QStringLiteral("aten::log"));
    QVERIFY(origin.value("produced").toBool());
    // The user's source line of the op, carried by the file (line 2: `return torch.log(x)`).
    QCOMPARE(origin.value("source").toString(), QStringLiteral("nan_model.py:2"));
}

void TestModelCli::inspectBackwardOnlyNan()
{
    const Output o = run({"inspect", model("backward-nan"), "--input-shape", "8x4", "--json"});
    QCOMPARE(o.code, 0);
    const QJsonObject j = o.objects.value(0);
    QCOMPARE(layer(j, "root").value("forward").toObject().value("nan").toInt(), 0);
    QVERIFY(layer(j, "fc").value("grad").toObject().value("nan").toInt() > 0);
    const QJsonObject origin = j.value("origin").toObject();
    QCOMPARE(origin.value("phase").toString(), QStringLiteral("backward"));
    QCOMPARE(origin.value("layer").toString(), QStringLiteral("root"));
    QVERIFY2(origin.value("op").toString().startsWith("SqrtBackward0"), qPrintable(origin.value("op").toString()));
    QCOMPARE(origin.value("source").toString(), QStringLiteral("sqrt_model.py:2"));
}

void TestModelCli::inspectCleanNestedModel()
{
    const Output o = run({"inspect", model("nested"), "--input-shape", "6x4", "--json"});
    QCOMPARE(o.code, 0);
    const QJsonObject j = o.objects.value(0);
    QVERIFY(j.value("origin").isNull());
    QCOMPARE(j.value("layers").toArray().size(), 13);
    for (const QJsonValue &v : j.value("layers").toArray()) {
        const QJsonObject l = v.toObject();
        QVERIFY2(l.value("forward").toObject().value("numel").toInt() > 0, qPrintable(l.value("path").toString()));
        QVERIFY2(l.value("grad").toObject().value("numel").toInt() > 0, qPrintable(l.value("path").toString()));
    }
    QCOMPARE(layer(j, "blocks.b1.act").value("type").toString(), QStringLiteral("ReLU"));
    QVERIFY(j.value("nonfinite_state").toArray().isEmpty());
}

void TestModelCli::inspectTextTable()
{
    const Output o = run({"inspect", model("forward-nan"), "--input-shape", "8x4"});
    QCOMPARE(o.code, 0);
    QVERIFY2(o.out.contains("first non-finite: phase forward, module 'logp', op aten::log, produced there"),
             qPrintable(o.out));
    QVERIFY(o.out.contains(QRegularExpression("\\nlogp\\s+Log\\s+\\d+ NaN")));
}

void TestModelCli::inspectReportsBadWeights()
{
    const Output o = run({"inspect", model("bad-weights"), "--input-shape", "2x4", "--json"});
    QCOMPARE(o.code, 0);
    const QJsonArray state = o.objects.value(0).value("nonfinite_state").toArray();
    QCOMPARE(state.size(), 2);
    QCOMPARE(state[0].toObject().value("name").toString(), QStringLiteral("fc.weight"));
    QCOMPARE(state[0].toObject().value("nan").toInt(), 2);
    QCOMPARE(state[0].toObject().value("posinf").toInt(), 1);
    QCOMPARE(state[1].toObject().value("kind").toString(), QStringLiteral("buffer"));
    const QJsonObject origin = o.objects.value(0).value("origin").toObject();
    QCOMPARE(origin.value("phase").toString(), QStringLiteral("parameter"));
    QCOMPARE(origin.value("layer").toString(), QStringLiteral("fc"));
}

void TestModelCli::badFile_data()
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
                                   << "newer PyTorch";
}

void TestModelCli::badFile()
{
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    const QString path = file("bad-" + kind + ".pt");
    if (kind != "missing")
        fixtures::writeBadFile(kind.toStdString(), path.toStdString());
    for (const QString &command : {QStringLiteral("inspect"), QStringLiteral("run")}) {
        const QStringList args = command == "inspect" ? QStringList{"inspect", path, "--input-shape", "2x4"}
                                                      : QStringList{"run", "--model", path, "--input-shape", "2x4"};
        const Output o = run(args);
        QCOMPARE(o.code, 1);  // the arguments were fine; loading the file failed
        QVERIFY2(o.err.startsWith("nanscope: cannot load '" + path + "'"), qPrintable(o.err));
        QVERIFY2(o.err.contains(expected), qPrintable(o.err));
        QCOMPARE(o.err.count('\n'), 1);
    }
}

void TestModelCli::wrongShapeSaysWhatWasExpected()
{
    const Output o = run({"inspect", model("nested"), "--input-shape", "8x5"});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains("rejected an input of shape 8x5"), qPrintable(o.err));
    QVERIFY2(o.err.contains("'stem' takes inputs whose last dimension is 4"), qPrintable(o.err));
    QVERIFY2(o.err.contains("8x5"), qPrintable(o.err));
    QCOMPARE(o.err.count('\n'), 1);
    QVERIFY(!o.err.contains("Traceback"));
    const Output none = run({"inspect", model("nested")});
    QCOMPARE(none.code, 1);
    QVERIFY2(none.err.contains(
                 "try --input-shape 8x4 (from the first weighted layer 'stem' (Linear), which takes 4 features)"),
             qPrintable(none.err));
    const Output pair = run({"inspect", model("two-inputs"), "--input-shape", "8x4"});
    QCOMPARE(pair.code, 1);
    QVERIFY2(pair.err.contains("forward(x, mask) takes 2 inputs, given 1: give one --input-shape per input"),
             qPrintable(pair.err));
    // Both given: the mask is bool (all false, nothing masked), one row per sample like x.
    const Output both = run({"run", "--model", model("two-inputs"), "--input-shape", "8x4", "--input-shape", "8x4:bool",
                             "--steps", "3", "--json"});
    QCOMPARE(both.code, 0);
    QCOMPARE(both.objects.last().value("steps_run").toInt(), 3);
    const Output wrongBatch =
        run({"inspect", model("two-inputs"), "--input-shape", "8x4", "--input-shape", "4x4:bool"});
    QCOMPARE(wrongBatch.code, 1);
    QVERIFY2(wrongBatch.err.contains("input 'mask' needs a shape whose first size is the batch, 8"),
             qPrintable(wrongBatch.err));
    const Output wrongDtype =
        run({"inspect", model("two-inputs"), "--input-shape", "8x4", "--input-shape", "8x4:half"});
    QCOMPARE(wrongDtype.code, 2);
    QVERIFY2(wrongDtype.err.contains("8x32:bool"), qPrintable(wrongDtype.err));
    const Output bad = run({"inspect", model("nested"), "--input-shape", "8xx4"});
    QCOMPARE(bad.code, 2);
    QVERIFY(bad.err.contains("--input-shape"));
}

void TestModelCli::tensorFiles()
{
    const QString x = file("x.pt"), y = file("y.pt");
    fixtures::writeTensor(x.toStdString(), "16x4", /*pythonFormat=*/true);
    fixtures::writeTensor(y.toStdString(), "16", /*pythonFormat=*/false, /*integerLabels=*/true, 3);
    const Output o = run({"inspect", model("nested"), "--inputs", x, "--targets", y, "--json"});
    QVERIFY2(o.code == 0, qPrintable(o.err));
    QCOMPARE(layer(o.objects.value(0), "head").value("forward").toObject().value("numel").toInt(), 16 * 3);
    const Output mse = run({"inspect", model("nested"), "--inputs", x, "--loss", "mse", "--json"});
    QVERIFY2(mse.code == 0, qPrintable(mse.err));
    QVERIFY(mse.objects.value(0).value("loss").toDouble() > 0);
}

void TestModelCli::wrongTargets()
{
    const QString x = file("x2.pt"), y = file("y2.pt"), missing = file("nothing.pt");
    fixtures::writeTensor(x.toStdString(), "16x4", false);
    fixtures::writeTensor(y.toStdString(), "16x3", true);  // floats where class indices belong
    Output o = run({"inspect", model("nested"), "--inputs", x, "--targets", y});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains("cross-entropy needs integer class indices of shape 16"), qPrintable(o.err));
    o = run({"inspect", model("nested"), "--inputs", missing});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains("inputs file '" + missing + "'") && o.err.contains("no such file"), qPrintable(o.err));
}

// A model that starts with an Embedding takes integer ids: synthetic ones below its vocabulary, or
// a file's as they are; with [N, S, vocab] out, each position learns the next token.
void TestModelCli::tokenIds()
{
    Output o = run({"run", "--model", model("token-lm"), "--input-shape", "4x10", "--input-dtype", "int64", "--steps",
                    "3", "--json"});
    QVERIFY2(o.code == 0, qPrintable(o.err));
    const QJsonObject first = o.objects.value(1);  // after the run's info event
    QCOMPARE(first.value("type").toString(), QStringLiteral("step"));
    // Untrained logits near 0 over 50 tokens: the loss starts near ln 50 = 3.91, which it can only
    // do when every target is a valid token (or ignored).
    QVERIFY2(first.value("loss").toDouble() > 3.0 && first.value("loss").toDouble() < 5.0,
             qPrintable(QString::number(first.value("loss").toDouble())));
    QCOMPARE(o.objects.last().value("steps_run").toInt(), 3);

    // The same ids from a file (Python's torch.save), targets the next tokens.
    const QString tokens = file("tokens.pt");
    fixtures::writeTensor(tokens.toStdString(), "12x10", /*pythonFormat=*/true, /*integerLabels=*/true, 50);
    o = run({"inspect", model("token-lm"), "--inputs", tokens, "--json"});
    QVERIFY2(o.code == 0, qPrintable(o.err));
    QCOMPARE(layer(o.objects.value(0), "emb").value("forward").toObject().value("numel").toInt(), 12 * 10 * 16);
    QCOMPARE(layer(o.objects.value(0), "head").value("forward").toObject().value("numel").toInt(), 12 * 10 * 50);

    // Floats where ids belong: the message says what the model takes.
    o = run({"run", "--model", model("token-lm"), "--input-shape", "4x10", "--steps", "1"});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains("it starts with the embedding 'emb', which takes integer token ids below 50"),
             qPrintable(o.err));
    // No input at all: the suggestion is a shape of ids.
    o = run({"run", "--model", model("token-lm")});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains("try --input-shape 8x32 --input-dtype int64"), qPrintable(o.err));
    // Ids for a model without an Embedding need a vocabulary.
    o = run({"run", "--model", model("nested"), "--input-shape", "4x4", "--input-dtype", "int64", "--steps", "1"});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains("synthetic ids for input 'x' need a vocabulary size"), qPrintable(o.err));
}

void TestModelCli::runSavesAModelThatInspectReadsAgain()
{
    const QString out = file("trained.pt");
    const Output o = run({"run", "--model", model("nested"), "--input-shape", "8x4", "--steps", "5", "--lr", "0.01",
                          "--clip", "1.0", "--json", "--save", out});
    QVERIFY2(o.code == 0, qPrintable(o.err));
    const QJsonObject summary = o.objects.last();
    QCOMPARE(summary.value("type").toString(), QStringLiteral("summary"));
    QCOMPARE(summary.value("steps_run").toInt(), 5);
    QVERIFY(summary.value("first_nonfinite_step").isNull());
    QVERIFY(QFileInfo::exists(out));
    const Output again = run({"inspect", out, "--input-shape", "8x4", "--json"});
    QVERIFY2(again.code == 0, qPrintable(again.err));
    QCOMPARE(again.objects.value(0).value("layers").toArray().size(), 13);
}

void TestModelCli::runWithRecoveryOnForwardNan()
{
    const Output o = run({"run", "--model", model("forward-nan"), "--input-shape", "8x4", "--steps", "3", "--recovery",
                          "full", "--json"});
    QVERIFY2(o.code == 0, qPrintable(o.err));
    const QJsonObject summary = o.objects.last();
    QCOMPARE(summary.value("first_nonfinite_step").toInt(), 0);
    QCOMPARE(summary.value("origin").toObject().value("layer").toString(), QStringLiteral("logp"));
    QCOMPARE(summary.value("origin").toObject().value("op").toString(), QStringLiteral("aten::log"));
    QVERIFY(summary.value("rollbacks").toInt() > 0);
}

void TestModelCli::runInEmulatedFp16()
{
    const Output o = run(
        {"run", "--model", model("nested"), "--input-shape", "8x4", "--steps", "6", "--precision", "fp16", "--json"});
    QVERIFY2(o.code == 0, qPrintable(o.err));
    const QJsonObject summary = o.objects.last();
    QCOMPARE(summary.value("precision").toString(), QStringLiteral("fp16 (emulated on CPU)"));
    QCOMPARE(summary.value("steps_run").toInt(), 6);
    // The initial scale 65536 overflows the rounded gradients twice; each overflow halves it.
    QCOMPARE(summary.value("scaler_skipped_steps").toInt(), 2);
    QCOMPARE(summary.value("final_loss_scale").toDouble(), 16384.0);
}

void TestModelCli::benchModel()
{
    const Output o = run({"bench", "--model", model("nested"), "--input-shape", "8x4", "--rounds", "3", "--json"});
    QVERIFY2(o.code == 0, qPrintable(o.err));
    const QJsonObject b = o.objects.value(0);
    QCOMPARE(b.value("batch").toInt(), 8);
    QVERIFY(b.value("probe_off_ms").toDouble() > 0);
    QVERIFY(b.value("full_map_ratio").toDouble() > 0);
    QVERIFY(b.value("load_ms").toDouble() > 0);
}

QTEST_GUILESS_MAIN(TestModelCli)
#include "tst_model_cli.moc"
