// hidden-by-nan-to-num: the loss stays finite while the sanitiser hides the NaN and the update
// ruins the input scale's weights, one sensor per bad sample; skipping the bad samples saves them.
#include "run_collector.h"

#include "nanscope/scenario.h"

#include <QtTest>

#include <cmath>
#include <map>
#include <set>

using namespace nanscope;

namespace {

// The scenario's bad samples and the sensor each one dropped out in (scenarios.cpp's data).
const std::map<std::int64_t, int> kSensorOfSample = {{100, 0}, {400, 1}, {700, 2}, {1000, 3}, {1300, 4}, {1550, 5}};

}  // namespace

class TestSanitizedScenario : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void lossStaysFiniteWhileSensorsDie();
    void skippingBadSamplesKeepsEverySensor();
};

void TestSanitizedScenario::lossStaysFiniteWhileSensorsDie()
{
    RunConfig config;
    config.scenario = "hidden-by-nan-to-num";
    const auto run = runToEnd(config);
    QVERIFY2(run->summary.error.empty(), run->summary.error.c_str());
    QCOMPARE(run->summary.stepsRun, findScenario(config.scenario)->defaultSteps);
    const int scale = run->layerId("scale"), sanitizeIn = run->layerId("sanitize_in");
    QVERIFY(scale >= 0 && sanitizeIn >= 0);

    // The sensors a bad sample has reached so far, from the batches the records name: the
    // update of that step writes NaN into the sensor's weight, so the next step's parameters
    // hold one more NaN.
    std::set<int> dead;
    std::set<std::int64_t> seen;
    int firstBad = -1;
    for (const StepRecordPtr &r : run->records) {
        QVERIFY2(std::isfinite(r->loss), qPrintable(QStringLiteral("step %1: loss %2").arg(r->step).arg(r->loss)));
        const LayerHealth &s = r->layers[std::size_t(scale)];
        QCOMPARE(s.params.nan, std::int64_t(dead.size()));
        QCOMPARE(s.params.numel, std::int64_t(32));
        // What the sanitiser hides: scale's output is non-finite in every step with a dead
        // sensor or a bad sample; the sanitiser's own output never is.
        QCOMPARE(s.forward.hasNonFinite(), !dead.empty() || !r->badSamples.empty());
        QVERIFY(!r->layers[std::size_t(sanitizeIn)].forward.hasNonFinite());
        for (std::int64_t sample : r->badSamples) {
            QVERIFY2(kSensorOfSample.count(sample), qPrintable(QString::number(sample)));
            seen.insert(sample);
            if (firstBad < 0)
                firstBad = r->step;
        }
        for (std::int64_t sample : r->badSamples)
            dead.insert(kSensorOfSample.at(sample));
    }
    QCOMPARE(seen.size(), kSensorOfSample.size());  // 100 steps are two epochs: every one was drawn
    QVERIFY(firstBad > 0);                          // the model trained finite for a while
    QCOMPARE(run->summary.firstNonFiniteStep, firstBad);
    QCOMPARE(run->summary.origin.phase, Phase::Input);
    QVERIFY(!run->summary.finalStateFinite);
    QCOMPARE(run->summary.nonFiniteStepsPerLayer.at(std::size_t(scale)), run->summary.stepsRun - firstBad);
    QCOMPARE(run->summary.nonFiniteStepsPerLayer.at(std::size_t(sanitizeIn)), 0);
}

void TestSanitizedScenario::skippingBadSamplesKeepsEverySensor()
{
    RunConfig config;
    config.scenario = "hidden-by-nan-to-num";
    Controls c = initialControls(config);
    c.recovery = RecoveryPolicy::skipOnly();
    config.controls = c;
    const auto fixed = runToEnd(config);
    QVERIFY2(fixed->summary.error.empty(), fixed->summary.error.c_str());
    QVERIFY(fixed->summary.finalStateFinite);
    QCOMPARE(std::set<std::int64_t>(fixed->summary.quarantinedSamples.begin(),
                                    fixed->summary.quarantinedSamples.end()).size(),
             kSensorOfSample.size());
    const int scale = fixed->layerId("scale");
    for (const StepRecordPtr &r : fixed->records)
        QCOMPARE(r->layers[std::size_t(scale)].params.nan, std::int64_t(0));

    // Every sensor kept: the model fits what the sanitised one, short of six inputs, cannot.
    config.controls.reset();
    const auto hidden = runToEnd(config);
    const double fixedLoss = fixed->records.back()->loss, hiddenLoss = hidden->records.back()->loss;
    QVERIFY2(fixedLoss < hiddenLoss / 2, qPrintable(QStringLiteral("%1 vs %2").arg(fixedLoss).arg(hiddenLoss)));
}

QTEST_GUILESS_MAIN(TestSanitizedScenario)
#include "tst_sanitized_scenario.moc"
