// The origin by call (rules/origin.h): a layer that runs several times a step (a cell in a loop, a
// block on several inputs) is named with the call that turned finite inputs into non-finite
// outputs, not by its calls merged; code outside any child is the container's call. In backward,
// the call whose backward turned a finite gradient into its output into a non-finite one into its
// input.
// The Python recorder follows the same rule (python/tests/test_same_origin_as_cpp.py).
#include "rules/origin.h"

#include <QtTest>

using namespace nanscope;

class TestOriginByCall : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theCallThatMadeItIsNamed_data();
    void theCallThatMadeItIsNamed();
    void theCallWhoseBackwardMadeItIsNamed_data();
    void theCallWhoseBackwardMadeItIsNamed();
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

void TestOriginByCall::theCallWhoseBackwardMadeItIsNamed_data()
{
    // Calls as "layer:the call whose output was its input" in the order they ended (layer 0 is the
    // root, 1 the cell, 2 a head): the cell four times in a loop, the head, the root. Gradients
    // into the calls' outputs as "call:non-finite", in the order backward ran. The first
    // non-finite one went into call j's output: the call that took that output made it.
    QTest::addColumn<QString>("backward");
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("call");
    QTest::addColumn<int>("of");
    QTest::addColumn<QString>("sentence");
    QTest::addRow("the cell's fourth call, into the third's output")
        << "5:0 4:0 3:0 2:1 1:1 0:1" << 1 << 4 << 4
        << "The forward pass is finite; the backward pass of layer 'cell' made a non-finite gradient in call 4 of 4.";
    QTest::addRow("its second call, into the first's output")
        << "5:0 4:0 3:0 2:0 1:0 0:1" << 1 << 2 << 4
        << "The forward pass is finite; the backward pass of layer 'cell' made a non-finite gradient in call 2 of 4.";
    QTest::addRow("the head, called once, into the cell's last output")
        << "5:0 4:0 3:1 2:1 1:1 0:1" << 2 << 0 << 0
        << "The forward pass is finite; the backward pass of layer 'head' made a non-finite gradient.";
    QTest::addRow("no call took the output: the map's rule (the loss)")
        << "5:1 4:1 3:1 2:1 1:1 0:1" << -1 << 0 << 0
        << "The forward pass is finite; the backward pass of the loss made a non-finite gradient.";
}

void TestOriginByCall::theCallWhoseBackwardMadeItIsNamed()
{
    QFETCH(QString, backward);
    QFETCH(int, layer);
    QFETCH(int, call);
    QFETCH(int, of);
    QFETCH(QString, sentence);
    const std::vector<Layer> layers = {{0, "", "Net", -1}, {1, "cell", "Linear", 0}, {2, "head", "Linear", 0}};
    const std::vector<LayerCall> calls = {{1, true, false, -1}, {1, true, false, 0}, {1, true, false, 1},
                                          {1, true, false, 2},  {2, true, false, 3}, {0, true, false, -1}};
    StepRecord r;
    r.step = 7;
    r.layers.resize(layers.size());
    std::vector<BackwardCall> events;
    std::vector<LayerCall> withGradients = calls;
    for (const QString &e : backward.split(QLatin1Char(' '))) {
        const QStringList f = e.split(QLatin1Char(':'));
        const int c = f[0].toInt();
        const bool nonFinite = f[1] == QLatin1String("1");
        events.push_back(BackwardCall{c, nonFinite});
        withGradients[std::size_t(c)].outputGradFinite = !nonFinite;
        r.layers[std::size_t(calls[std::size_t(c)].layer)].grad.merge(health(nonFinite));  // the map merges them
        r.layers[std::size_t(calls[std::size_t(c)].layer)].forward.merge(health(false));
    }
    const std::vector<int> order = {1, 2, 0};
    Origin o = findOrigin(OriginInputs{r, layers, order, true, &withGradients, &events});
    o.explanation = explainOrigin(o, r);
    QCOMPARE(phaseName(o.phase), "backward");
    QCOMPARE(o.layer, layer);
    QCOMPARE(o.call, call);
    QCOMPARE(o.calls, of);
    QCOMPARE(QString::fromStdString(o.explanation), sentence);
    // Without the backward events, the map's rule: the layer after the cell's merged gradient.
    if (layer == 1)
        QCOMPARE(findOrigin(OriginInputs{r, layers, order, true, &withGradients}).layer, 2);
}

QTEST_GUILESS_MAIN(TestOriginByCall)
#include "tst_origin_by_call.moc"
