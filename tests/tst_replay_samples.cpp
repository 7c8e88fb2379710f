// Which samples make a failing step fail: replay's bisection of the batch, with BatchNorm's batch
// statistics held as recorded where they can be, and the bisection's own cases.
// LibTorch's headers first: Qt's `slots` macro would otherwise rename IValue::slots().
#include "replay/replayer.h"

#include "run_file_helpers.h"
#include "torchscript_fixtures.h"

#include "nanscope/capsule_file.h"
#include "nanscope/replay.h"
#include "replay/sample_bisect.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

using namespace nanscope;
using namespace nanscope::testing;

Q_DECLARE_METATYPE(std::vector<std::size_t>)

class TestReplaySamples : public QObject {
    Q_OBJECT

private slots:
    void nanInputNamesTheBadSample();
    void batchStatisticsAreHeldAsRecorded_data();
    void batchStatisticsAreHeldAsRecorded();
    void bisectionFindsTheRows_data();
    void bisectionFindsTheRows();

private:
    std::string path(const char *name) const { return dir_.filePath(QString::fromUtf8(name)).toStdString(); }
    QTemporaryDir dir_;
};

void TestReplaySamples::nanInputNamesTheBadSample()
{
    const std::string file = path("nan-input.nsrun");
    const auto run = recordRun(scenario("nan-input", 3), file);
    const StepRecordPtr first = run->records.at(std::size_t(run->summary.firstNonFiniteStep));
    QVERIFY(!first->badSamples.empty());

    ReplayOptions o;
    o.whatIf = false;
    const ReplayReport r = replayCapsule(file, o);
    // The bisection finds by replays what the input scan saw: the samples holding NaN/Inf.
    QCOMPARE(r.samples, first->badSamples);
    QVERIFY(r.bisectReplays > 0 && r.bisectReplays < 32);
    QVERIFY(std::count(r.coupledBy.begin(), r.coupledBy.end(), "bn1") == 1);
    // The bad sample's NaN is in bn1's batch statistics: they cannot be held, and the report says so.
    QVERIFY(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string &n) {
        return n.rfind("bn1, bn2: the recorded batch statistics are non-finite", 0) == 0;
    }));
}

void TestReplaySamples::batchStatisticsAreHeldAsRecorded_data()
{
    QTest::addColumn<QString>("model");  // a fixture's kind, or empty for the scenario
    QTest::addColumn<QStringList>("coupling");
    QTest::addRow("safe-training") << QString() << QStringList{"bn1", "bn2"};
    QTest::addRow("torchscript") << QString("batchnorm") << QStringList{"bn"};
}

void TestReplaySamples::batchStatisticsAreHeldAsRecorded()
{
    // BatchNorm layers in training mode normalise with the batch's statistics (safe-training's bn1
    // and bn2; a TorchScript file's bn, momentum 0.1). Held, a subset of the batch passes the first
    // of them row for row as the whole batch did: the two halves' extremes are the whole batch's.
    QFETCH(QString, model);
    QFETCH(QStringList, coupling);
    const std::string file = path("held.nsrun");
    QFile::remove(QString::fromStdString(file));
    RunConfig c = scenario("safe-training", 4);
    if (!model.isEmpty()) {
        c.scenario.clear();
        c.modelPath = path("batchnorm.pt");
        fixtures::writeModel(model.toStdString(), c.modelPath);
        c.inputShape = {16, 4};
    }
    c.capsuleSteps = {2};
    const auto run = recordRun(c, file);
    QVERIFY2(run->summary.error.empty(), run->summary.error.c_str());
    RunFile recorded(file);
    std::vector<EventMessage> notes;
    Replayer r(recorded, readCapsule(file, 2), "cpu", notes);
    const std::shared_ptr<StepRecord> whole = r.computeStep(r.capsule().state, false);
    const std::vector<BatchStatistic> held = r.holdBatchStatistics(*whole);
    QCOMPARE(int(held.size()), coupling.size());
    for (int i = 0; i < coupling.size(); ++i) {
        QCOMPARE(QString::fromStdString(held[std::size_t(i)].path), coupling[i]);
        QVERIFY(held[std::size_t(i)].finite);
    }

    const std::size_t n = r.capsule().state.batch.indices.size();
    std::vector<std::size_t> first, second;
    for (std::size_t i = 0; i < n; ++i)
        (i < n / 2 ? first : second).push_back(i);
    auto extremes = [&](const std::shared_ptr<StepRecord> &a, const std::shared_ptr<StepRecord> &b) {
        const TensorHealth &x = a->layers[std::size_t(held[0].layer)].forward;
        const TensorHealth &y = b->layers[std::size_t(held[0].layer)].forward;
        return std::make_pair(std::min(x.min, y.min), std::max(x.max, y.max));
    };
    const TensorHealth &all = whole->layers[std::size_t(held[0].layer)].forward;
    auto same = [](double a, double b) { return std::abs(a - b) <= 1e-4 * std::max(1.0, std::abs(b)); };
    const auto heldHalves =
        extremes(r.computeStep(r.stateWithRows(first), false), r.computeStep(r.stateWithRows(second), false));
    QVERIFY2(same(heldHalves.first, all.min) && same(heldHalves.second, all.max),
             qPrintable(QString("held halves %1..%2, whole batch %3..%4")
                            .arg(heldHalves.first)
                            .arg(heldHalves.second)
                            .arg(all.min)
                            .arg(all.max)));
    // Each half normalised by its own statistics passes bn1 otherwise.
    r.releaseBatchStatistics();
    const auto ownHalves =
        extremes(r.computeStep(r.stateWithRows(first), false), r.computeStep(r.stateWithRows(second), false));
    QVERIFY(!same(ownHalves.first, all.min) || !same(ownHalves.second, all.max));
}

void TestReplaySamples::bisectionFindsTheRows_data()
{
    QTest::addColumn<int>("rows");
    QTest::addColumn<std::vector<std::size_t>>("culprits");
    QTest::addColumn<bool>("needsCompany");  // like BatchNorm: a row fails only beside others
    QTest::addRow("one of 32") << 32 << std::vector<std::size_t>{17} << false;
    QTest::addRow("two of 32") << 32 << std::vector<std::size_t>{3, 29} << false;
    QTest::addRow("first and last of 7") << 7 << std::vector<std::size_t>{0, 6} << false;
    QTest::addRow("one beside others") << 32 << std::vector<std::size_t>{10} << true;
}

void TestReplaySamples::bisectionFindsTheRows()
{
    QFETCH(int, rows);
    QFETCH(std::vector<std::size_t>, culprits);
    QFETCH(bool, needsCompany);
    int calls = 0;
    const BisectResult r = bisectRows(std::size_t(rows), [&](const std::vector<std::size_t> &set) {
        ++calls;
        if (needsCompany && set.size() < 2)
            return false;
        return std::any_of(set.begin(), set.end(), [&](std::size_t i) {
            return std::find(culprits.begin(), culprits.end(), i) != culprits.end();
        });
    });
    QCOMPARE(r.rows, culprits);
    QCOMPARE(r.replays, calls);
    QVERIFY(!r.together && !r.anySample);
    QVERIFY(r.replays <= int(culprits.size()) * 2 * 6 + 4);  // O(log n) a culprit

    // A step that fails whatever rows it gets names none.
    const BisectResult any = bisectRows(32, [](const std::vector<std::size_t> &) { return true; });
    QVERIFY(any.anySample && any.rows.empty());
}

QTEST_GUILESS_MAIN(TestReplaySamples)
#include "tst_replay_samples.moc"
