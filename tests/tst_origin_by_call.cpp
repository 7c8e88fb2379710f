// The forward origin by call (probe/origin.h): a layer that runs several times a step (a cell in a
// loop, a block on several inputs) is named with the call that turned finite inputs into
// non-finite outputs, not by its calls merged; code outside any child is the container's call.
// The Python recorder follows the same rule (python/tests/test_same_origin_as_cpp.py).
#include "rules/origin.h"

#include <QtTest>

using namespace nanscope;

class TestOriginByCall : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theCallThatMadeItIsNamed_data();
    void theCallThatMadeItIsNamed();
};

namespace {

TensorHealth health(bool nonFinite)
{
    TensorHealth h;
    h.present = true;
    h.numel = 8;
    h.nan = nonFinite ? 2 : 0;
    h.min = -1.0;
    h.max = 1.0;
    h.absMax = 1.0;
    return h;
}

}  // namespace

void TestOriginByCall::theCallThatMadeItIsNamed_data()
{
    // Calls as "layer:inputs finite:output non-finite", in the order they ended (layer 0 is the
    // root, 1 the cell, 2 a head).
    QTest::addColumn<QString>("calls");
    QTest::addColumn<int>("layer");
    QTest::addColumn<bool>("produced");
    QTest::addColumn<int>("call");
    QTest::addColumn<int>("of");
    QTest::addColumn<QString>("sentence");
    QTest::addRow("the cell's second call of three") << "1:1:0 1:1:1 1:0:1 2:0:1 0:1:1" << 1 << true << 2 << 3
                                                     << "Layer 'cell' turned finite inputs into non-finite outputs "
                                                        "in call 2 of 3.";
    QTest::addRow("its last call") << "1:1:0 1:1:0 1:1:1 2:0:1 0:1:1" << 1 << true << 3 << 3
                                   << "Layer 'cell' turned finite inputs into non-finite outputs in call 3 of 3.";
    QTest::addRow("a layer called once: no call named") << "1:1:0 2:1:1 0:1:1" << 2 << true << 0 << 0
                                                        << "Layer 'head' turned finite inputs into non-finite outputs.";
    QTest::addRow("the root's own code before the cell") << "1:0:1 1:0:1 2:0:1 0:1:1" << 0 << true << 0 << 0
                                                         << "The model's own forward (outside its modules) made a "
                                                            "non-finite value.";
    QTest::addRow("no call had finite inputs: the first bad one") << "1:0:1 1:0:1 0:0:1" << 1 << false << 1 << 2
                                                                  << "Layer 'cell' received non-finite inputs in "
                                                                     "call 1 of 2.";
}

void TestOriginByCall::theCallThatMadeItIsNamed()
{
    QFETCH(QString, calls);
    QFETCH(int, layer);
    QFETCH(bool, produced);
    QFETCH(int, call);
    QFETCH(int, of);
    QFETCH(QString, sentence);
    const std::vector<Layer> layers = {{0, "", "Net", -1}, {1, "cell", "Linear", 0}, {2, "head", "Linear", 0}};
    StepRecord r;
    r.step = 4;
    r.layers.resize(layers.size());
    std::vector<LayerCall> byCall;
    std::vector<int> order;
    for (const QString &c : calls.split(QLatin1Char(' '))) {
        const QStringList f = c.split(QLatin1Char(':'));
        byCall.push_back(LayerCall{f[0].toInt(), f[1] == QLatin1String("1"), f[2] == QLatin1String("1")});
        order.push_back(f[0].toInt());
        // The map merges a layer's calls: non-finite when any call's output was.
        LayerHealth &h = r.layers[std::size_t(f[0].toInt())];
        h.forward.merge(health(byCall.back().outputNonFinite));
        h.inputFinite = byCall.back().inputFinite;
    }
    Origin o = findOrigin(OriginInputs{r, layers, order, true, &byCall});
    o.explanation = explainOrigin(o, r);
    QCOMPARE(phaseName(o.phase), "forward");
    QCOMPARE(o.layer, layer);
    QCOMPARE(o.produced, produced);
    QCOMPARE(o.call, call);
    QCOMPARE(o.calls, of);
    QCOMPARE(QString::fromStdString(o.explanation), sentence);
    // Without the calls (a model observed another way), the map alone names no call.
    QCOMPARE(findOrigin(OriginInputs{r, layers, order, true}).calls, 0);
}

QTEST_GUILESS_MAIN(TestOriginByCall)
#include "tst_origin_by_call.moc"
