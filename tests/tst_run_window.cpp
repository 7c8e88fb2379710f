// The window and run files: a live run is recorded and reads back into a second window exactly as
// it was shown live, each step in its own precision; a bad file gets a message box; a job folder
// opens with its ranks. Replays and capsules from the window: tst_replay_window.
#include "live_session.h"
#include "models/layer_tree_model.h"
#include "models/rank_layer_model.h"
#include "widgets/control_panel.h"
#include "widgets/nan_map_view.h"
#include "widgets/optimizer_edit.h"
#include "widgets/origin_panel.h"
#include "widgets/plot_panel.h"
#include "widgets/rank_step_view.h"
#include "window/main_window.h"

#include "nanscope/run_file.h"

#include "watchdog.h"
#include "window_runs.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QProcess>
#include <QPushButton>
#include <QDoubleSpinBox>
#include <QDir>
#include <QHash>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTreeView>
#include <QTemporaryDir>
#include <QtTest>

using namespace nanscope;
using nanscope::testing::runToEnd;

class TestRunWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);  // the runs folder and settings of a test
        QVERIFY(dir_.isValid());
    }
    void openedRunShowsWhatLiveShowed_data();
    void openedRunShowsWhatLiveShowed();
    void longRunOpensFromItsChunks();
    void optimizerSettingStartsTheRunAndIsRecorded();
    void everyCorpusFileOpensOrGetsAMessageBox_data();
    void everyCorpusFileOpensOrGetsAMessageBox();
    void aReopenedRunKeepsEachStepsPrecision();
    void aJobFolderOpensWithARankSelector();
    void aRecordedJobShowsWhichRankWentFirst();

private:
    QTemporaryDir dir_;
};

void TestRunWindow::openedRunShowsWhatLiveShowed_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::newRow("nan-input") << QStringLiteral("nan-input");
    QTest::newRow("exploding-deep") << QStringLiteral("exploding-deep");
}

void TestRunWindow::openedRunShowsWhatLiveShowed()
{
    QFETCH(QString, scenario);
    MainWindow live(newLiveSession);
    live.selectScenario(scenario);
    QCOMPARE(live.controlPanel()->scenario(), scenario);
    live.setSteps(30);
    QVERIFY(runToEnd(live, [&] { QVERIFY(live.startRun()); }));
    const QString file = live.runFile();
    QVERIFY(file.startsWith(MainWindow::runsFolder()));
    QVERIFY(QFile::exists(file));

    MainWindow opened(newLiveSession);
    opened.selectScenario(QStringLiteral("large-lr-mse"));
    QVERIFY(runToEnd(opened, [&] { QVERIFY(opened.openRun(file)); }));
    // The panel shows what the recorded run ran with.
    QCOMPARE(opened.controlPanel()->scenario(), scenario);
    QCOMPARE(opened.controlPanel()->runConfig().steps, 30);
    QCOMPARE(opened.controlPanel()->controls().learningRate, live.controlPanel()->controls().learningRate);
    QVERIFY(opened.showingRecordedRun());
    QCOMPARE(opened.recentRuns().value(0), file);

    // Plots, map, tree and origin: as live.
    const RunStore &a = live.store(), &b = opened.store();
    QCOMPARE(b.stepsSeen(), 30LL);
    QCOMPARE(b.stepsSeen(), a.stepsSeen());
    for (Series s : {Series::Loss, Series::GradNorm, Series::LearningRate}) {
        const auto &x = a.series(s).buckets(), &y = b.series(s).buckets();
        QCOMPARE(y.size(), x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            QCOMPARE(y[i].finiteCount, x[i].finiteCount);
            QCOMPARE(y[i].firstNonFiniteStep, x[i].firstNonFiniteStep);
            if (x[i].finiteCount > 0) {
                QCOMPARE(y[i].min, x[i].min);
                QCOMPARE(y[i].max, x[i].max);
            }
        }
    }
    QCOMPARE(b.map().columnCount(), a.map().columnCount());
    QCOMPARE(b.map().layerCount(), a.map().layerCount());
    for (MapKind k : {MapKind::Forward, MapKind::Grad, MapKind::Params})
        for (int c = 0; c < a.map().columnCount(); ++c)
            for (int l = 0; l < a.map().layerCount(); ++l) {
                const MapCell &x = a.map().cell(k, c, l), &y = b.map().cell(k, c, l);
                QCOMPARE(y.present, x.present);
                QCOMPARE(y.nonFinite(), x.nonFinite());
                QCOMPARE(y.absMax, x.absMax);
            }
    QCOMPARE(opened.layerModel()->rowCount(opened.layerModel()->index(0, 0)),
             live.layerModel()->rowCount(live.layerModel()->index(0, 0)));
    QCOMPARE(opened.originText(), live.originText());
    QCOMPARE(b.firstOrigin().step, a.firstOrigin().step);

    // Nothing steers a recorded run, and the window says why.
    QVERIFY(!opened.controlPanel()->isEnabled());
    QVERIFY(opened.controlPanel()->toolTip().contains(QStringLiteral("recorded run")));
    QVERIFY(!opened.action(QStringLiteral("start"))->isEnabled());
    QVERIFY(!opened.action(QStringLiteral("pause"))->isEnabled());
    QVERIFY(opened.action(QStringLiteral("closeRun"))->isEnabled());
    QVERIFY(!opened.startRun());

    // Save run as: a copy that opens on its own.
    const QString copy = dir_.filePath(scenario + QStringLiteral("-copy.nsrun"));
    QString error;
    QVERIFY2(opened.saveRunAs(copy, &error), qPrintable(error));
    QCOMPARE(RunFile(copy.toStdString()).stats().steps, 30);
    QVERIFY2(live.saveRunAs(copy, &error), qPrintable(error));  // the live window's file, too
    QVERIFY(RunFile(copy.toStdString()).info().finished);

    // Close run: back to training live.
    opened.closeRun();
    QVERIFY(!opened.showingRecordedRun());
    QVERIFY(opened.controlPanel()->isEnabled());
    QVERIFY(opened.action(QStringLiteral("start"))->isEnabled());
    QCOMPARE(opened.store().stepsSeen(), 0LL);
    QCOMPARE(opened.controlPanel()->scenario(), QStringLiteral("large-lr-mse"));  // the live settings are back
}

// A long run opens from its chunks (and its last chunk's steps): the tree, the origin, the step
// shown and the steps counted are those of opening it step by step. (That the plots and the map
// hold the same buckets is tst_run_store's chunksGiveTheSameStoreAsTheirSteps.)
void TestRunWindow::longRunOpensFromItsChunks()
{
    MainWindow live(newLiveSession);
    live.selectScenario(QStringLiteral("nan-input"));
    live.setSteps(300);
    QVERIFY(runToEnd(live, [&] { QVERIFY(live.startRun()); }));
    const QString file = live.runFile();

    MainWindow chunked(newLiveSession), stepwise(newLiveSession);
    chunked.setOpenChunkedAbove(0);
    stepwise.setOpenChunkedAbove(-1);
    QVERIFY(runToEnd(chunked, [&] { QVERIFY(chunked.openRun(file)); }));
    QVERIFY(runToEnd(stepwise, [&] { QVERIFY(stepwise.openRun(file)); }));
    QCOMPARE(chunked.store().stepsSeen(), 300LL);
    QCOMPARE(stepwise.store().stepsSeen(), 300LL);
    QVERIFY(chunked.store().series(Series::Loss).valuesPerBucket() >= kChunkSteps);  // it did use chunks
    QCOMPARE(stepwise.store().series(Series::Loss).valuesPerBucket(), 1);
    QCOMPARE(chunked.originText(), stepwise.originText());
    QVERIFY(!chunked.originText().isEmpty());
    QCOMPARE(chunked.statusText(), stepwise.statusText());
    const LayerTreeModel &a = *chunked.layerModel(), &b = *stepwise.layerModel();
    int marked = 0;
    for (const Layer &l : chunked.controller().layers())
        for (int column = 0; column < LayerTreeModel::ColumnCount; ++column) {
            const QString x = a.data(a.indexForLayer(l.id, column)).toString();
            QCOMPARE(x, b.data(b.indexForLayer(l.id, column)).toString());
            marked += column == LayerTreeModel::FirstNonFiniteColumn && !x.isEmpty() ? 1 : 0;
        }
    QVERIFY(marked > 0);  // some layer has a first non-finite step to compare
}

// The optimizer in the control panel: momentum only for SGD, the run trains with the choice, an
// opened run shows it, and another scenario starts from its own optimizer again.
void TestRunWindow::optimizerSettingStartsTheRunAndIsRecorded()
{
    MainWindow w(newLiveSession);
    w.selectScenario(QStringLiteral("large-lr-mse"));
    w.setSteps(12);
    OptimizerEdit &edit = *w.controlPanel()->optimizerEdit();
    QVERIFY(!edit.momentumBox()->isEnabled());  // the scenario's own: no momentum to set
    edit.kindBox()->setCurrentIndex(edit.kindBox()->findData(int(OptimizerKind::Adam)));
    QVERIFY(!edit.momentumBox()->isEnabled());
    edit.kindBox()->setCurrentIndex(edit.kindBox()->findData(int(OptimizerKind::Sgd)));
    QVERIFY(edit.momentumBox()->isEnabled());
    edit.momentumBox()->setValue(0.9);
    QVERIFY(!edit.weightDecayBox()->isEnabled());
    QVERIFY(runToEnd(w, [&] { QVERIFY(w.startRun()); }));
    QCOMPARE(QString::fromStdString(w.controller().lastSummary().optimizer), QStringLiteral("sgd, momentum 0.9"));
    QCOMPARE(w.store().firstOrigin().step, 6);  // plain SGD overflows at step 8

    MainWindow opened(newLiveSession);
    QVERIFY(runToEnd(opened, [&] { QVERIFY(opened.openRun(w.runFile())); }));
    const OptimizerChoice shown = opened.controlPanel()->optimizerEdit()->choice();
    QVERIFY(shown.kind == OptimizerKind::Sgd);
    QCOMPARE(shown.momentum.value_or(0), 0.9);

    w.selectScenario(QStringLiteral("nan-input"));
    QVERIFY(edit.choice().empty());
}

// Every file of the corpus the command line and the fuzzer use (tests/data/run-files), opened in
// the window under a time limit: a bad-* file gets a one-line message box that names its fault, a
// good-* file is shown to its last step, and no file leaves the window hanging.
void TestRunWindow::everyCorpusFileOpensOrGetsAMessageBox_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("cause");  // empty: the file must open
    // Each fault's words, written here rather than taken from the reader.
    const QHash<QString, QString> causes{
        {QStringLiteral("bad-corrupted-pages.nsrun"), QStringLiteral("damaged")},
        {QStringLiteral("bad-empty.nsrun"), QStringLiteral("empty")},
        {QStringLiteral("bad-huge-step.nsrun"), QStringLiteral("step 4294967296 is out of range")},
        {QStringLiteral("bad-layer-ids.nsrun"), QStringLiteral("layer ids are not 0, 1, 2")},
        {QStringLiteral("bad-negative-step.nsrun"), QStringLiteral("step -2 is negative")},
        {QStringLiteral("bad-newer-version.nsrun"), QStringLiteral("newer NaNScope")},
        {QStringLiteral("bad-other-database.nsrun"), QStringLiteral("not a NaNScope run file")},
        {QStringLiteral("bad-parent-after.nsrun"), QStringLiteral("layer 1's parent 2 is listed after it")},
        {QStringLiteral("bad-parent-cycle.nsrun"), QStringLiteral("layer 1 is its own ancestor")},
        {QStringLiteral("bad-parent-missing.nsrun"), QStringLiteral("layer 2's parent 7 is not a layer")},
        {QStringLiteral("bad-parent-self.nsrun"), QStringLiteral("layer 1 is its own ancestor")},
        {QStringLiteral("bad-parent-text.nsrun"), QStringLiteral("layer 2's parent is not a layer id")},
        {QStringLiteral("bad-text.nsrun"), QStringLiteral("not an SQLite database")},
        {QStringLiteral("bad-truncated.nsrun"), QStringLiteral("damaged")},
    };
    QTest::newRow("missing") << dir_.filePath(QStringLiteral("missing.nsrun")) << QStringLiteral("no such file");
    const QDir corpus(QStringLiteral(NANSCOPE_RUN_FILE_CORPUS));
    const QStringList files = corpus.entryList({QStringLiteral("*.nsrun")}, QDir::Files, QDir::Name);
    for (const QString &f : files) {
        const bool good = f.startsWith(QStringLiteral("good-"));
        // A new bad file must say here what its message names.
        QVERIFY2(good || causes.contains(f), qPrintable(f + QStringLiteral(" has no expected cause in this test")));
        QTest::newRow(qPrintable(f)) << corpus.filePath(f) << (good ? QString() : causes.value(f));
    }
}

void TestRunWindow::everyCorpusFileOpensOrGetsAMessageBox()
{
    QFETCH(QString, path);
    QFETCH(QString, cause);
    QString copy = path;
    if (QFile::exists(path)) {  // a copy: the corpus stays as committed
        copy = dir_.filePath(QFileInfo(path).fileName());
        QFile::remove(copy);
        QVERIFY(QFile::copy(path, copy));
    }
    const testing::Watchdog limit("opening " + copy.toStdString() + " in the window", std::chrono::seconds(60));
    MainWindow w(newLiveSession);
    if (cause.isEmpty()) {
        const long long steps = RunFile(copy.toStdString()).stats().steps;
        QVERIFY(steps > 0);
        QVERIFY(runToEnd(w, [&] { QVERIFY(w.openRun(copy)); }));
        QVERIFY(w.showingRecordedRun());
        QCOMPARE(w.store().stepsSeen(), steps);
        QVERIFY(!w.findChild<QMessageBox *>());
        w.resize(1200, 800);
        QVERIFY(!w.grab().isNull());  // paints every view: the tree, the map and its row labels, the plots
        return;
    }
    QVERIFY(!w.openRun(copy));
    QVERIFY(!w.showingRecordedRun());
    QMessageBox *box = w.findChild<QMessageBox *>();
    QVERIFY(box);
    QVERIFY2(box->text().startsWith(copy + QStringLiteral(": ")), qPrintable(box->text()));
    QVERIFY(!box->text().contains(QLatin1Char('\n')));
    QVERIFY2(box->text().contains(cause), qPrintable(box->text()));
    QVERIFY(w.controlPanel()->isEnabled());  // the live window is untouched
    QVERIFY(w.action(QStringLiteral("start"))->isEnabled());
}

// A run whose precision changed at a paused step reads back with each step's own precision, and a
// reopened window draws its map against its last step's precision, as the live one did (not the
// controls the run started with).
void TestRunWindow::aReopenedRunKeepsEachStepsPrecision()
{
    MainWindow live(newLiveSession);
    live.selectScenario(QStringLiteral("large-lr-mse"));
    live.setSteps(12);
    QCheckBox *pause = nullptr;
    QComboBox *precision = live.controlPanel()->precisionBox();
    for (QCheckBox *box : live.controlPanel()->findChildren<QCheckBox *>())
        if (box->text().startsWith(QLatin1String("Pause on non-finite")))
            pause = box;
    QVERIFY(pause && precision);
    pause->setChecked(true);
    QSignalSpy ended(&live, &MainWindow::runEnded);
    QVERIFY(live.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(live.originPanel()->awaitingDecision(), 60000);
    QCOMPARE(live.nanMap()->precision(), Precision::FP32);
    pause->setChecked(false);
    precision->setCurrentIndex(precision->findData(int(Precision::FP16)));  // from the next step on
    for (QPushButton *b : live.originPanel()->findChildren<QPushButton *>())
        if (b->text() == QLatin1String("&Continue"))
            b->click();
    QVERIFY(!live.originPanel()->awaitingDecision());
    QVERIFY(ended.wait(60000));
    QCOMPARE(live.nanMap()->precision(), Precision::FP16);

    const std::vector<StepRecordPtr> steps = RunFile(live.runFile().toStdString()).readSteps(-1, 100);
    QCOMPARE(int(steps.size()), 12);
    const int paused = live.store().firstOrigin().step;  // computed in fp32 before the change
    QVERIFY(paused > 0 && paused < 11);
    for (const StepRecordPtr &r : steps)
        QCOMPARE(int(r->precision), int(r->step <= paused ? Precision::FP32 : Precision::FP16));
    MainWindow opened(newLiveSession);
    QVERIFY(runToEnd(opened, [&] { QVERIFY(opened.openRun(live.runFile())); }));
    QCOMPARE(opened.nanMap()->precision(), Precision::FP16);
}

void TestRunWindow::aJobFolderOpensWithARankSelector()
{
    // A job's run folder: rank 0's run stayed finite (safe-training), rank 1's did not (nan-input).
    QTemporaryDir job;
    const char *scenarios[2] = {"safe-training", "nan-input"};
    for (int r = 0; r < 2; ++r) {
        QString recorded;
        {
            MainWindow live(newLiveSession);
            live.selectScenario(QString::fromLatin1(scenarios[r]));
            live.setSteps(4);
            QVERIFY(runToEnd(live, [&] { QVERIFY(live.startRun()); }));
            recorded = live.runFile();
        }  // the window closes its run file: all of it is in the file
        QVERIFY(QFile::copy(recorded, job.filePath(QStringLiteral("rank-%1.nsrun").arg(r))));
    }
    MainWindow opened(newLiveSession);
    QComboBox *ranks = opened.rankSelector();
    QVERIFY(ranks && !opened.showingJob());
    QVERIFY(runToEnd(opened, [&] { QVERIFY(opened.openRun(job.path())); }));
    QVERIFY(opened.showingJob());
    QCOMPARE(ranks->count(), 2);
    QCOMPARE(ranks->currentText(), QStringLiteral("rank 1"));  // the rank that went non-finite first
    QVERIFY(opened.runFile().endsWith(QStringLiteral("rank-1.nsrun")));
    QVERIFY(opened.store().firstOrigin().valid());

    // The rank x layer view opens on the step where the job went non-finite first: rank 1's input
    // was born non-finite there, rank 0 was finite in every row.
    RankStepView *view = opened.rankView();
    RankLayerModel *cells = view->model();
    const int firstStep = opened.store().firstOrigin().step;
    QCOMPARE(view->step(), firstStep);
    QCOMPARE(cells->columnCount(), 2);
    QCOMPARE(cells->rowCount(), int(cells->jobStep().layers.size()) + 2);
    const QModelIndex born = cells->index(cells->rowOfLayer(RankLayerModel::kInputRow), 1);
    QCOMPARE(born.data(RankLayerModel::StatusRole).toInt(), int(LayerStatus::BornHere));
    QVERIFY2(born.data().toString().startsWith(QStringLiteral("◆")), qPrintable(born.data().toString()));
    for (int row = 0; row < cells->rowCount(); ++row)
        QCOMPARE(cells->index(row, 0).data(RankLayerModel::StatusRole).toInt(), int(LayerStatus::Clean));
    QCOMPARE(cells->headerData(1, Qt::Horizontal).toString(), QStringLiteral("rank 1 ◆"));
    QVERIFY2(view->summaryText().contains(QStringLiteral("Rank 1 went non-finite before the all-reduce")),
             qPrintable(view->summaryText()));
    opened.selectStep(firstStep + 1);  // a click on the map or a plot
    QCOMPARE(view->step(), firstStep + 1);

    ranks->setCurrentIndex(0);
    QVERIFY(runToEnd(opened, [&] { emit ranks->activated(0); }));
    QVERIFY(opened.runFile().endsWith(QStringLiteral("rank-0.nsrun")));
    QVERIFY(!opened.store().firstOrigin().valid());
    QVERIFY(opened.showingJob());

    // A cell activated in the view shows that rank's run at that layer.
    QVERIFY(runToEnd(opened, [&] { emit view->table()->activated(cells->index(cells->rowOfLayer(2), 1)); }));
    QVERIFY(opened.runFile().endsWith(QStringLiteral("rank-1.nsrun")));
    QCOMPARE(ranks->currentIndex(), 1);
    QCOMPARE(opened.layerView()->currentIndex().data(LayerTreeModel::LayerIdRole).toInt(), 2);
    QCOMPARE(opened.plots()->cursorStep(), view->step());  // the step stays picked across ranks

    // A run file of its own is no job.
    QVERIFY(runToEnd(opened, [&] { QVERIFY(opened.openRun(job.filePath(QStringLiteral("rank-1.nsrun")))); }));
    QVERIFY(!opened.showingJob());
    QCOMPARE(cells->columnCount(), 0);
}

void TestRunWindow::aRecordedJobShowsWhichRankWentFirst()
{
    // A job recorded by `run --ranks 2`, its files named their own way: the run rows say the ranks.
    // Rank 1 draws a NaN sample at step 2; the window opens on it, its Ranks panel marks rank 1's
    // input at step 2, and rank 0 stayed finite.
    QTemporaryDir job;
    QProcess nanscope;
    QStringList args;
    for (const char *a :
         {"run", "--scenario", "large-lr-ce", "--steps", "5", "--ranks", "2", "--inject", "nan-sample@1:2", "--record"})
        args << QString::fromLatin1(a);
    nanscope.start(QStringLiteral(NANSCOPE_EXE), args << job.path());
    QVERIFY(nanscope.waitForFinished(120000));
    QCOMPARE(nanscope.exitCode(), 0);
    for (int r = 0; r < 2; ++r)
        QVERIFY(QFile::rename(job.filePath(QStringLiteral("rank-%1.nsrun").arg(r)),
                              job.filePath(QStringLiteral("node-%1.nsrun").arg(char('b' - r)))));
    MainWindow opened(newLiveSession);
    QVERIFY(runToEnd(opened, [&] { QVERIFY(opened.openRun(job.path())); }));
    QVERIFY(opened.showingJob());
    QCOMPARE(opened.rankSelector()->currentText(), QStringLiteral("rank 1"));
    QVERIFY(opened.runFile().endsWith(QStringLiteral("node-a.nsrun")));
    const RankLayerModel *cells = opened.rankView()->model();
    QCOMPARE(opened.rankView()->step(), 2);
    QCOMPARE(cells->index(cells->rowOfLayer(RankLayerModel::kInputRow), 1).data(RankLayerModel::StatusRole).toInt(),
             int(LayerStatus::BornHere));
    QCOMPARE(cells->index(cells->rowOfLayer(RankLayerModel::kInputRow), 1).data().toString(),
             QStringLiteral("◆ 1 NaN"));
    for (int row = 0; row < cells->rowCount(); ++row)
        QCOMPARE(cells->index(row, 0).data(RankLayerModel::StatusRole).toInt(), int(LayerStatus::Clean));
    QVERIFY2(opened.rankView()->summaryText().contains(
                 QStringLiteral("The job went non-finite first at step 2, on rank 1.")),
             qPrintable(opened.rankView()->summaryText()));
}

QTEST_MAIN(TestRunWindow)
#include "tst_run_window.moc"
