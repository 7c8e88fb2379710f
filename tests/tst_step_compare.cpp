// The replay's verdict on a step computed again, from constructed differences: each verdict
// (reproduced bit for bit, reproduced within the tolerance, not reproduced) and the layer named
// where the two steps part (weights first, else the deepest layer that differs).
#include "replay/step_compare.h"

#include <QtTest>

#include <functional>
#include <limits>

using namespace nanscope;

Q_DECLARE_METATYPE(std::function<void(StepRecord &)>)

namespace {

using Edit = std::function<void(StepRecord &)>;

TensorHealth finite(double max)
{
    TensorHealth h;
    h.present = true;
    h.numel = 64;
    h.min = -max / 2;
    h.max = max;
    h.absMax = max;
    h.finiteL2 = max * 3;
    return h;
}

// The model: the root "" holds fc1 and fc2.
const std::vector<Layer> kLayers = {{0, "", "Net", -1}, {1, "fc1", "Linear", 0}, {2, "fc2", "Linear", 0}};

StepRecord finiteStep()
{
    StepRecord r;
    r.step = 7;
    r.inputHealth = finite(1.0);
    r.lossHealth = finite(2.5);
    r.layers.resize(kLayers.size());
    for (std::size_t i = 0; i < r.layers.size(); ++i) {
        LayerHealth &l = r.layers[i];
        l.forward = finite(1.0 + double(i));
        l.grad = finite(0.1 * double(i + 1));
        l.params = finite(0.5 + double(i));
        l.paramGrads = finite(0.01 * double(i + 1));
    }
    return r;
}

// fc2's forward output overflowed: the step failed there.
void failInFc2(StepRecord &r)
{
    r.layers[2].forward.posInf = 3;
    r.origin.step = r.step;
    r.origin.phase = Phase::Forward;
    r.origin.layer = 2;
    r.origin.produced = true;
}

void scale(TensorHealth &h, double factor)
{
    h.min *= factor;
    h.max *= factor;
    h.absMax *= factor;
    h.finiteL2 *= factor;
}

}  // namespace

class TestStepCompare : public QObject {
    Q_OBJECT
private slots:
    void verdictAndWhere_data();
    void verdictAndWhere();
};

void TestStepCompare::verdictAndWhere_data()
{
    QTest::addColumn<Edit>("recordedEdit");
    QTest::addColumn<Edit>("replayedEdit");
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<QString>("verdict");
    QTest::addColumn<int>("differsAt");
    QTest::addColumn<QString>("differsWhat");  // the start of it

    const Edit none = [](StepRecord &) {};
    QTest::newRow("identical") << none << none << 1e-4 << "reproduced" << -1 << "";
    QTest::newRow("identical failure") << Edit(failInFc2) << Edit(failInFc2) << 0.0 << "reproduced" << -1 << "";
    // 1e-6 relative: inside a 1e-4 tolerance, outside a bit-for-bit comparison. The difference is
    // still named, so that the user sees where the bits parted.
    QTest::newRow("fc2 forward within tolerance")
        << none << Edit([](StepRecord &r) { scale(r.layers[2].forward, 1 + 1e-6); }) << 1e-4
        << "reproduced-numerically" << 2 << "forward: ";
    QTest::newRow("failure within tolerance")
        << Edit(failInFc2) << Edit([](StepRecord &r) {
               failInFc2(r);
               scale(r.layers[2].grad, 1 - 1e-5);
           })
        << 1e-4 << "reproduced-numerically" << 2 << "grad: ";
    QTest::newRow("fc2 forward beyond tolerance")
        << none << Edit([](StepRecord &r) { scale(r.layers[2].forward, 1.1); }) << 1e-4 << "not-reproduced" << 2
        << "forward: max |x| 3 recorded, max |x| 3.3 now";
    QTest::newRow("finite this time") << Edit(failInFc2) << none << 1e-4 << "not-reproduced" << 2
                                      << "forward: 0 NaN, 3 Inf, max |x| 3 recorded, max |x| 3 now";
    QTest::newRow("another failure") << Edit(failInFc2) << Edit([](StepRecord &r) {
        failInFc2(r);
        r.layers[2].forward.posInf = 0;
        r.layers[2].forward.nan = 3;
    }) << 1e-4 << "not-reproduced" << 2 << "forward: 0 NaN, 3 Inf";
    // The same numbers, but one side calls the step failed: not the same failure.
    QTest::newRow("failed on one side only")
        << none << Edit([](StepRecord &r) {
               r.origin.step = r.step;
               r.origin.phase = Phase::Loss;
               scale(r.lossHealth, 1 + 1e-6);
           })
        << 1e-4 << "not-reproduced" << -1 << "";
    QTest::newRow("weights first")
        << none << Edit([](StepRecord &r) {
               scale(r.layers[1].params, 2);   // fc1's weights were not what they were ...
               scale(r.layers[2].forward, 2);  // ... so fc2, after it, differs too
           })
        << 1e-4 << "not-reproduced" << 1 << "params: ";
    QTest::newRow("deepest layer, not its parent")
        << none << Edit([](StepRecord &r) {
               scale(r.layers[0].forward, 2);
               scale(r.layers[2].grad, 2);
           })
        << 1e-4 << "not-reproduced" << 2 << "grad: ";
    QTest::newRow("only the loss") << none << Edit([](StepRecord &r) { scale(r.lossHealth, 2); }) << 1e-4
                                   << "not-reproduced" << -1 << "loss: max |x| 2.5 recorded, max |x| 5 now";
    QTest::newRow("a layer fewer") << none << Edit([](StepRecord &r) { r.layers.pop_back(); }) << 1e-4
                                   << "not-reproduced" << -1 << "";
}

void TestStepCompare::verdictAndWhere()
{
    QFETCH(Edit, recordedEdit);
    QFETCH(Edit, replayedEdit);
    QFETCH(double, tolerance);
    QFETCH(QString, verdict);
    QFETCH(int, differsAt);
    QFETCH(QString, differsWhat);
    StepRecord recorded = finiteStep(), replayed = finiteStep();
    recordedEdit(recorded);
    replayedEdit(replayed);
    const StepComparison c = compareSteps(recorded, replayed, kLayers, tolerance);
    QCOMPARE(QString::fromLatin1(replayVerdictId(c.verdict)), verdict);
    QCOMPARE(c.differsAt, differsAt);
    const QString what = QString::fromStdString(c.differsWhat);
    QVERIFY2(differsWhat.isEmpty() ? what.isEmpty() : what.startsWith(differsWhat), qPrintable(what));
}

QTEST_GUILESS_MAIN(TestStepCompare)
#include "tst_step_compare.moc"
