// The window's one background worker (ui/window/background_job.h): what a job hands back runs on
// the GUI thread; a newer job or a cancel() drops what an older job still delivers and tells that
// job so; destroying the worker waits for the job under way.
#include "window/background_job.h"

#include <QSignalSpy>
#include <QThread>
#include <QtTest>

#include <atomic>
#include <memory>

using namespace nanscope;

namespace {

// A job that waits until `release` is set or it is cancelled, then says whether it saw the cancel.
BackgroundJob::Work waiting(std::shared_ptr<std::atomic<bool>> release, std::shared_ptr<std::atomic<bool>> sawCancel,
                            std::function<void()> delivery)
{
    return [=](const std::atomic<bool> &cancelled, const BackgroundJob::Post &) -> BackgroundJob::Delivery {
        while (!*release && !cancelled)
            QThread::msleep(1);
        *sawCancel = cancelled.load();
        return delivery;
    };
}

}  // namespace

class TestBackgroundJob : public QObject {
    Q_OBJECT
private slots:
    void aResultArrivesOnTheGuiThread();
    void aNewerJobDropsTheOlderOnesResult();
    void cancelDropsTheResultAndTellsTheJob();
    void progressOfADroppedJobIsDropped();
    void destroyingWaitsForTheJob();
};

void TestBackgroundJob::aResultArrivesOnTheGuiThread()
{
    BackgroundJob job;
    QThread *workedOn = nullptr, *deliveredOn = nullptr;
    int value = 0;
    job.start([&](const std::atomic<bool> &, const BackgroundJob::Post &) -> BackgroundJob::Delivery {
        workedOn = QThread::currentThread();
        const int computed = 6 * 7;
        return [&, computed] {
            deliveredOn = QThread::currentThread();
            value = computed;
        };
    });
    QVERIFY(job.running());
    QTRY_COMPARE(value, 42);
    QVERIFY(!job.running());
    QCOMPARE(deliveredOn, QThread::currentThread());
    QVERIFY(workedOn != QThread::currentThread());
}

void TestBackgroundJob::aNewerJobDropsTheOlderOnesResult()
{
    BackgroundJob job;
    QSignalSpy discarded(&job, &BackgroundJob::discarded);
    auto release = std::make_shared<std::atomic<bool>>(false), sawCancel = std::make_shared<std::atomic<bool>>(false);
    QStringList delivered;
    job.start(waiting(release, sawCancel, [&] { delivered << QStringLiteral("old"); }));
    job.start([&](const std::atomic<bool> &, const BackgroundJob::Post &) -> BackgroundJob::Delivery {
        return [&] { delivered << QStringLiteral("new"); };
    });
    QVERIFY(*sawCancel);  // start() cancelled the old job and waited for it
    QTRY_COMPARE(delivered, QStringList{QStringLiteral("new")});
    QTRY_COMPARE(discarded.count(), 1);
    QCOMPARE(delivered, QStringList{QStringLiteral("new")});
}

void TestBackgroundJob::cancelDropsTheResultAndTellsTheJob()
{
    BackgroundJob job;
    QSignalSpy discarded(&job, &BackgroundJob::discarded);
    auto release = std::make_shared<std::atomic<bool>>(false), sawCancel = std::make_shared<std::atomic<bool>>(false);
    bool delivered = false;
    job.start(waiting(release, sawCancel, [&] { delivered = true; }));
    job.cancel();
    QVERIFY(!job.running());  // at once, without waiting for the job
    QVERIFY(discarded.wait(5000));
    QVERIFY(*sawCancel);
    QVERIFY(!delivered);
}

void TestBackgroundJob::progressOfADroppedJobIsDropped()
{
    BackgroundJob job;
    QStringList said;
    auto release = std::make_shared<std::atomic<bool>>(false);
    job.start([&, release](const std::atomic<bool> &cancelled, const BackgroundJob::Post &post) -> BackgroundJob::Delivery {
        post([&] { said << QStringLiteral("first"); });
        while (!*release && !cancelled)
            QThread::msleep(1);
        post([&] { said << QStringLiteral("after the cancel"); });
        return {};
    });
    QTRY_COMPARE(said, QStringList{QStringLiteral("first")});
    job.cancel();
    QSignalSpy discarded(&job, &BackgroundJob::discarded);
    QVERIFY(discarded.wait(5000));
    QCOMPARE(said, QStringList{QStringLiteral("first")});
}

void TestBackgroundJob::destroyingWaitsForTheJob()
{
    auto ended = std::make_shared<std::atomic<bool>>(false);
    {
        BackgroundJob job;
        job.start([ended](const std::atomic<bool> &cancelled, const BackgroundJob::Post &) -> BackgroundJob::Delivery {
            while (!cancelled)
                QThread::msleep(1);
            QThread::msleep(20);  // the job's last computation, after it heard of the cancel
            *ended = true;
            return {};
        });
    }
    QVERIFY(*ended);
}

QTEST_GUILESS_MAIN(TestBackgroundJob)
#include "tst_background_job.moc"
