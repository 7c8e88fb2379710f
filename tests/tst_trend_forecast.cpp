// Seeing a NaN coming: each trend TrendForecast watches, fed one hand-built record a step, warns at
// the step and in the words it should, once, and not for the series that only look alike.
#include "rules/trend_forecast.h"

#include <QtTest>

#include <set>

using namespace nanscope;

namespace {

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

}  // namespace

class TestTrendForecast : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void overflowForecast_data();
    void overflowForecast();
    void otherForecasts_data();
    void otherForecasts();
};

// One leaf layer under the root whose output's absmax follows `values`, one step each: the step
// of the first warning and its text.
void TestTrendForecast::overflowForecast_data()
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

void TestTrendForecast::overflowForecast()
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

// The other trends: a value shrinking to 0 in reduced precision, updates as large as the weights,
// a loss scale that keeps falling below 1. `series` is what follows `values`, one step each.
void TestTrendForecast::otherForecasts_data()
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

void TestTrendForecast::otherForecasts()
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

QTEST_GUILESS_MAIN(TestTrendForecast)
#include "tst_trend_forecast.moc"
