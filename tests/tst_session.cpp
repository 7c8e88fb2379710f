// The session's live behaviour: controls at the next step, pause before the update, stop, step N.
#include "run_collector.h"

#include "nanscope/recorded_run.h"

#include <QtTest>

#include <algorithm>
#include <chrono>
#include <thread>

using namespace nanscope;

namespace {

// Changes the LR from the observer callback when step `at` is recorded.
struct LrChanger final : RunObserver {
    Session *session = nullptr;
    int at = 5;
    void stepRecorded(const StepRecordPtr &r) override
    {
        if (r->step == at) {
            Controls c = session->controls();
            c.learningRate = 0.5;
            session->setControls(c);
        }
    }
};

template <typename Pred> bool waitFor(Pred pred, int ms = 30000)
{
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > end)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

// nan-input with pause-on-non-finite: it pauses on the first batch holding a bad sample.
RunConfig pausingNanInput()
{
    RunConfig config;
    config.scenario = "nan-input";
    config.steps = 30;
    Controls controls;
    controls.learningRate = 1e-3;
    controls.pauseOnNonFinite = true;
    config.controls = controls;
    return config;
}

std::size_t recordCount(RunCollector &c)
{
    std::lock_guard<std::mutex> lock(c.mutex);
    return c.records.size();
}

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void controlChangeAppliesAtTheNextStep();
    void pauseOnNonFiniteLeavesTheWeightsUntouched();
    void otherDecisionsOnAPausedStep_data();
    void otherDecisionsOnAPausedStep();
    void aRetryKeepsWhatItsFirstAttemptQuarantined();
    void stopMidRunReturnsPromptly();
    void stepWhilePausedRunsExactlyThatMany();
    void badConfigurationIsRefusedWithAMessage();
    void optimizerChoiceTrainsWithIt_data();
    void optimizerChoiceTrainsWithIt();
};

void TestSession::controlChangeAppliesAtTheNextStep()
{
    Session session;
    RunCollector c;
    LrChanger changer;
    changer.session = &session;
    session.addObserver(&c);
    session.addObserver(&changer);
    RunConfig config;
    config.scenario = "large-lr-ce";
    config.steps = 10;
    QVERIFY(session.start(config));
    QVERIFY(session.wait(60000));
    QCOMPARE(c.records.size(), std::size_t(10));
    for (const auto &r : c.records)
        QCOMPARE(r->learningRate, r->step <= 5 ? 100.0 : 0.5);
    bool logged = false;
    for (const Event &e : c.events)
        logged = logged || (e.kind == EventKind::ControlChange && e.step == 6 && e.text == "lr 0.5");
    QVERIFY(logged);
}

void TestSession::pauseOnNonFiniteLeavesTheWeightsUntouched()
{
    Session session;
    RunCollector c;
    session.addObserver(&c);
    QVERIFY(session.start(pausingNanInput()));
    QVERIFY(waitFor([&] { return session.state() == SessionState::Paused; }));
    // While paused, the Paused event says where the value was born; the step's record is not
    // published until the step is decided, so no observer ever sees it change.
    Event pausedEvent;
    std::size_t before = 0;
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        QVERIFY(!c.events.empty());
        pausedEvent = c.events.back();
        before = c.records.size();
        for (const StepRecordPtr &r : c.records)
            QVERIFY(!r->nonFinite());
    }
    QCOMPARE(pausedEvent.kind, EventKind::Paused);
    QCOMPARE(pausedEvent.origin.phase, Phase::Input);
    QCOMPARE(pausedEvent.run, session.runId());
    QCOMPARE(pausedEvent.step, int(before));
    session.decidePausedStep(PausedStepDecision::SkipBatch);
    QVERIFY(waitFor([&] { return recordCount(c) > before + 1; }));
    StepRecordPtr paused, next;
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        paused = c.records.at(before);
        next = c.records.at(before + 1);
    }
    QCOMPARE(paused->step, pausedEvent.step);
    QVERIFY(paused->nonFinite());
    QVERIFY(paused->skipped);
    QCOMPARE(paused->why, std::string("batch skipped"));
    QCOMPARE(next->step, paused->step + 1);
    // The skipped step changed nothing: the next step sees the very same parameters.
    for (std::size_t l = 0; l < next->layers.size(); ++l) {
        QCOMPARE(next->layers[l].params.finiteL2, paused->layers[l].params.finiteL2);
        QCOMPARE(next->layers[l].params.nonFinite(), std::int64_t(0));
    }
    session.stop();
    QVERIFY(session.wait(10000));
}

// Continue, Retry with a changed control, and Roll back, from the step nan-input pauses on.
void TestSession::otherDecisionsOnAPausedStep_data()
{
    QTest::addColumn<QString>("decision");
    QTest::newRow("continue") << "continue";
    QTest::newRow("retry, quarantining the samples") << "retry";
    QTest::newRow("roll back") << "rollback";
}

void TestSession::otherDecisionsOnAPausedStep()
{
    QFETCH(QString, decision);
    Session session;
    RunCollector c;
    session.addObserver(&c);
    QVERIFY(session.start(pausingNanInput()));
    QVERIFY(waitFor([&] { return session.state() == SessionState::Paused; }));
    const std::size_t before = recordCount(c);
    const int pausedStep = int(before);  // every earlier step was published, from 0
    if (decision == "continue") {
        session.decidePausedStep(PausedStepDecision::Continue);
    } else if (decision == "retry") {
        Controls controls = *pausingNanInput().controls;
        controls.recovery.quarantineSamples = true;  // the same batch again, without its bad samples
        session.setControls(controls);
        session.decidePausedStep(PausedStepDecision::Retry);
    } else {
        session.requestRollback();
    }
    // Continue: the next step fails on the weights the update made NaN and pauses in turn; stopping
    // there publishes it unapplied.
    const auto pausedEvents = [&] {
        std::lock_guard<std::mutex> lock(c.mutex);
        return std::count_if(c.events.begin(), c.events.end(), [](const Event &e) { return e.kind == EventKind::Paused; });
    };
    if (decision == "continue")
        QVERIFY(waitFor([&] { return pausedEvents() == 2; }));
    else
        QVERIFY(waitFor([&] { return recordCount(c) > before + 1; }));
    session.stop();
    QVERIFY(session.wait(10000));
    std::lock_guard<std::mutex> lock(c.mutex);
    const StepRecord &decided = *c.records.at(before), &next = *c.records.at(before + 1);
    QCOMPARE(decided.step, pausedStep);
    const auto eventsSaying = [&](EventKind kind, const std::string &text) {
        return std::count_if(c.events.begin(), c.events.end(), [&](const Event &e) {
            return e.kind == kind && e.step == pausedStep && e.text == text;
        });
    };
    if (decision == "continue") {
        // The update was applied with the non-finite gradients: the next step's weights are NaN.
        QVERIFY(decided.failed());
        QVERIFY(!decided.skipped);
        QCOMPARE(next.step, pausedStep + 1);
        QVERIFY(std::any_of(next.layers.begin(), next.layers.end(),
                            [](const LayerHealth &l) { return l.params.hasNonFinite(); }));
        QCOMPARE(next.origin.phase, Phase::Update);
    } else if (decision == "retry") {
        // The failed attempt was never published: the step's one record is the retried batch,
        // with the bad samples named and dropped.
        QCOMPARE(eventsSaying(EventKind::Recovery, "retrying the step"), 1L);
        QVERIFY(!decided.failed());
        QVERIFY(!decided.skipped);
        QVERIFY(!decided.badSamples.empty());
        QCOMPARE(decided.quarantined, decided.badSamples);
        QCOMPARE(next.step, pausedStep + 1);
        for (const LayerHealth &l : next.layers)
            QVERIFY(!l.params.hasNonFinite());
    } else {
        // The paused step is skipped, then the newest checked-finite snapshot comes back (step
        // numbers go on through a rollback).
        QVERIFY(decided.skipped);
        QCOMPARE(std::count_if(c.events.begin(), c.events.end(),
                               [](const Event &e) { return e.kind == EventKind::Rollback; }),
                 1L);
        QCOMPARE(next.step, pausedStep + 1);
        for (const LayerHealth &l : next.layers)
            QVERIFY(!l.params.hasNonFinite());
        QCOMPARE(c.summary.rollbacks, 1);
        // Read back from an unfinished file, the rollback the user asked for between steps is
        // still counted: no record says it, its event does.
        SummaryBuilder built(RunFileInfo{}, c.layers.size());
        for (const StepRecordPtr &r : c.records)
            built.add(*r);
        for (const Event &e : c.events)
            built.add(e);
        QCOMPARE(built.summary().rollbacks, 1);
    }
}

// Step 3 draws a NaN sample, which the policy quarantines, and a flipped weight makes the loss
// infinite: the run pauses on a step whose batch is already clean. Its retry trains the clean batch
// (the flip was for that attempt only); the sample it left out stays in the step's row and the summary.
void TestSession::aRetryKeepsWhatItsFirstAttemptQuarantined()
{
    RunConfig config;
    config.scenario = "large-lr-ce";
    config.steps = 6;
    config.nanSample.step = 3;
    config.fault.step = 3;
    config.fault.layer = "fc";
    Controls controls;
    controls.learningRate = 1e-3;
    controls.pauseOnNonFinite = true;
    controls.recovery.quarantineSamples = true;
    config.controls = controls;
    Session session;
    RunCollector c;
    session.addObserver(&c);
    QVERIFY(session.start(config));
    QVERIFY(waitFor([&] { return session.state() == SessionState::Paused; }));
    session.decidePausedStep(PausedStepDecision::Retry);
    QVERIFY(session.wait(30000));
    std::lock_guard<std::mutex> lock(c.mutex);
    QVERIFY2(c.summary.error.empty(), c.summary.error.c_str());
    QCOMPARE(c.summary.stepsRun, 6);
    const StepRecord &retried = *c.records.at(3);
    QCOMPARE(retried.step, 3);
    QVERIFY(!retried.failed());
    QVERIFY(retried.badSamples.empty());  // the batch it trained on had been cleaned
    QCOMPARE(retried.quarantined.size(), std::size_t(1));
    const auto named = std::find_if(c.events.begin(), c.events.end(), [](const Event &e) {
        return e.kind == EventKind::Recovery && e.step == 3 && e.text.rfind("quarantined samples ", 0) == 0;
    });
    QVERIFY(named != c.events.end());
    QCOMPARE(named->text, "quarantined samples " + std::to_string(retried.quarantined[0]));
    QVERIFY(c.summary.quarantinedSamples == retried.quarantined);
}

void TestSession::stopMidRunReturnsPromptly()
{
    Session session;
    RunCollector c;
    session.addObserver(&c);
    RunConfig config;
    config.scenario = "safe-training";
    config.steps = 1000000;
    QVERIFY(session.start(config));
    QVERIFY(waitFor([&] { return recordCount(c) >= 5; }));
    const auto t0 = std::chrono::steady_clock::now();
    session.stop();
    QVERIFY(session.wait(2000));
    QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    QVERIFY(c.finished);
    QVERIFY(c.summary.stepsRun < 1000000);
    QVERIFY(c.summary.error.empty());
}

void TestSession::stepWhilePausedRunsExactlyThatMany()
{
    Session session;
    RunCollector c;
    session.addObserver(&c);
    RunConfig config;
    config.scenario = "large-lr-ce";
    config.steps = 100000;
    QVERIFY(session.start(config));
    QVERIFY(waitFor([&] { return recordCount(c) >= 2; }));
    session.pause();
    QVERIFY(waitFor([&] { return session.state() == SessionState::Paused; }));
    QVERIFY(waitFor([&] { return session.waitingAtStepBoundary(); }));  // a step in flight has landed
    const std::size_t before = recordCount(c);
    session.stepOnce(3);
    QVERIFY(waitFor([&] { return recordCount(c) >= before + 3; }));
    QVERIFY(waitFor([&] { return session.waitingAtStepBoundary(); }));  // and no fourth is coming
    QCOMPARE(recordCount(c), before + 3);
    session.stop();
    QVERIFY(session.wait(10000));
}

void TestSession::badConfigurationIsRefusedWithAMessage()
{
    Session session;
    RunConfig config;
    config.scenario = "no-such-scenario";
    std::string error;
    QVERIFY(!session.start(config, &error));
    QVERIFY(error.find("unknown scenario") != std::string::npos);
    config.scenario = "large-lr-ce";
    config.device = "tpu";
    QVERIFY(!session.start(config, &error));
    QVERIFY(error.find("unknown device") != std::string::npos);
    // A model run's loss is checked before the file is even opened.
    config.device = "cpu";
    config.modelPath = "model.pt";
    config.loss = "hinge";
    QVERIFY(!session.start(config, &error));
    QCOMPARE(QString::fromStdString(error), QStringLiteral("the loss is cross-entropy, mse or model, got 'hinge'"));
    // Optimizer settings out of range are refused at once; a momentum for Adam when its run builds.
    config.modelPath.clear();
    config.loss = "cross-entropy";
    config.optimizer.momentum = 1.0;
    QVERIFY(!session.start(config, &error));
    QCOMPARE(QString::fromStdString(error), QStringLiteral("the momentum must lie in [0, 1)"));
    config.optimizer.momentum = 0.9;
    config.optimizer.kind = OptimizerKind::Adam;
    config.steps = 3;
    const auto c = runToEnd(config);
    QCOMPARE(QString::fromStdString(c->summary.error),
             QStringLiteral("momentum is a setting of sgd; this run's optimizer is adam (Adam's betas are its own)"));
}

void TestSession::optimizerChoiceTrainsWithIt_data()
{
    QTest::addColumn<int>("kind");  // -1: the scenario's own
    QTest::addColumn<double>("momentum");
    QTest::addColumn<double>("weightDecay");  // -1: the optimizer's default
    QTest::addColumn<QString>("label");
    QTest::addColumn<int>("firstNonFinite");
    // large-lr-mse, LR 1: plain SGD overflows at step 8, momentum gets there sooner, Adam's
    // normalised steps never do in 30 steps.
    QTest::newRow("scenario's own") << -1 << 0.0 << -1.0 << "sgd" << 8;
    QTest::newRow("sgd momentum") << int(OptimizerKind::Sgd) << 0.9 << -1.0 << "sgd, momentum 0.9" << 6;
    QTest::newRow("sgd weight decay") << int(OptimizerKind::Sgd) << 0.0 << 0.1 << "sgd, weight decay 0.1" << 8;
    QTest::newRow("adam") << int(OptimizerKind::Adam) << 0.0 << -1.0 << "adam" << -1;
    QTest::newRow("adamw") << int(OptimizerKind::AdamW) << 0.0 << -1.0 << "adamw, weight decay 0.01" << -1;
}

void TestSession::optimizerChoiceTrainsWithIt()
{
    QFETCH(int, kind);
    QFETCH(double, momentum);
    QFETCH(double, weightDecay);
    QFETCH(QString, label);
    QFETCH(int, firstNonFinite);
    RunConfig config;
    config.scenario = "large-lr-mse";
    config.steps = 30;
    if (kind >= 0)
        config.optimizer.kind = OptimizerKind(kind);
    if (momentum > 0)
        config.optimizer.momentum = momentum;
    if (weightDecay >= 0)
        config.optimizer.weightDecay = weightDecay;
    const auto c = runToEnd(config);
    QVERIFY2(c->summary.error.empty(), c->summary.error.c_str());
    QCOMPARE(QString::fromStdString(c->summary.optimizer), label);
    QCOMPARE(c->summary.firstNonFiniteStep, firstNonFinite);
    QVERIFY(!c->events.empty() && c->events.front().text.find(label.toStdString()) != std::string::npos);
    if (kind == int(OptimizerKind::Sgd) && weightDecay > 0) {  // the decay changes the trajectory
        RunConfig plain = config;
        plain.optimizer = {};
        const auto p = runToEnd(plain);
        QVERIFY(p->records[3]->loss != c->records[3]->loss);
    }
}

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
