// The job controller without a window: a job's folder of two rank files (rank 1 went non-finite at
// step 2, rank 0 never) opens at rank 1 with the selector and the dock; another rank opens through
// the window's callback with the layer and step to show again; a rank that fails to open leaves the
// selector on the rank shown; leaving the job hides it all; a folder without rank files is refused.
#include "window/job_controller.h"

#include "widgets/rank_step_view.h"

#include "nanscope/pushed_run_source.h"
#include "nanscope/run_recorder.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace nanscope;

class TestJobController : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void opensAtTheRankThatFailedFirst();
    void aFolderWithoutRanksIsRefused();
};

namespace {

// A rank's run file of four steps; `failedAt` >= 0: its summary's first non-finite step.
void writeRank(const QString &path, int failedAt)
{
    PushedRunSource source;
    RunRecorder recorder(path.toStdString());
    source.addObserver(&recorder);
    source.beginRun(1, {Layer{0, "fc", "Linear", -1}});
    for (int step = 0; step < 4; ++step) {
        auto r = std::make_shared<StepRecord>();
        r->run = 1;
        r->step = step;
        r->loss = step == failedAt ? std::numeric_limits<double>::quiet_NaN() : 1.0;
        r->layers.resize(1);
        source.pushStep(r);
    }
    RunSummary summary;
    summary.run = 1;
    summary.stepsRun = 4;
    summary.firstNonFiniteStep = failedAt;
    source.finishRun(summary);
    source.removeObserver(&recorder);
    recorder.close();
}

struct Job {
    QWidget window;
    QComboBox *box = new QComboBox(&window);
    QAction *action = new QAction(&window);
    RankStepView *view = new RankStepView;
    QDockWidget *dock = new QDockWidget(&window);
    QStringList opened;  // the files the window was asked to open
    bool refuse = false;
    JobController jobs{box, action, view, dock, [this](const QString &path, bool) {
                           if (refuse)
                               return false;
                           opened << path;
                           return true;
                       }};
    Job()
    {
        dock->setWidget(view);
        action->setVisible(false);
    }
};

}  // namespace

void TestJobController::opensAtTheRankThatFailedFirst()
{
    QTemporaryDir folder;
    writeRank(folder.filePath(QStringLiteral("rank-0.nsrun")), -1);
    writeRank(folder.filePath(QStringLiteral("rank-1.nsrun")), 2);
    Job job;
    QSignalSpy said(&job.jobs, &JobController::opened);
    QString error;
    QVERIFY2(job.jobs.open(folder.path(), false, &error), qPrintable(error));
    QCOMPARE(job.opened, QStringList{folder.filePath(QStringLiteral("rank-1.nsrun"))});
    QVERIFY(job.jobs.showing());
    QCOMPARE(job.box->count(), 2);
    QCOMPARE(job.box->currentText(), QStringLiteral("rank 1"));
    QVERIFY(!job.dock->isHidden());
    QCOMPARE(said.count(), 1);
    QVERIFY(said.at(0).at(0).toString().contains(QStringLiteral("2 ranks, showing rank 1")));

    int layer = 0, step = 0;
    QVERIFY(!job.jobs.takeChoice(&layer, &step));  // the job's first rank: nothing to choose again
    QVERIFY(job.jobs.openRank(0, 3));
    QCOMPARE(job.opened.last(), folder.filePath(QStringLiteral("rank-0.nsrun")));
    QCOMPARE(job.box->currentIndex(), 0);
    QVERIFY(job.jobs.takeChoice(&layer, &step));
    QCOMPARE(layer, 3);
    QCOMPARE(step, job.view->step());
    QVERIFY(!job.jobs.takeChoice(&layer, &step));  // taken once
    QVERIFY(job.jobs.openRank(0, 1));  // shown already: not opened again
    QCOMPARE(job.opened.size(), 2);

    job.refuse = true;  // rank 1's file cannot be opened now
    QVERIFY(!job.jobs.openRank(1, -1));
    QCOMPARE(job.box->currentIndex(), 0);  // the selector still names the rank shown
    QVERIFY(!job.jobs.takeChoice(&layer, &step));

    job.jobs.leave();
    QVERIFY(!job.jobs.showing());
    QCOMPARE(job.box->count(), 0);
    QVERIFY(job.dock->isHidden());
}

void TestJobController::aFolderWithoutRanksIsRefused()
{
    QTemporaryDir empty;
    Job job;
    QString error;
    QVERIFY(!job.jobs.open(empty.path(), true, &error));
    QVERIFY2(error.contains(empty.path()), qPrintable(error));
    QVERIFY(job.opened.isEmpty());
    QVERIFY(!job.jobs.showing());
}

QTEST_MAIN(TestJobController)
#include "tst_job_controller.moc"
