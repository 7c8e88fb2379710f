#include "window/run_comparison.h"

#include "nanscope/run_file.h"

#include <utility>

namespace nanscope {

namespace {

constexpr int kBatch = 1000;

std::shared_ptr<const RunStore> storeOf(const RunFile &file)
{
    auto store = std::make_shared<RunStore>();
    store->reset(file.layers());
    StepChunkPtr chunk;  // a thinned step's layers are its chunk's
    for (int after = -1;;) {
        const std::vector<StepRecordPtr> steps = file.readSteps(after, kBatch);
        for (const StepRecordPtr &r : steps)
            store->append(*withChunkLayers(file, r, &chunk));
        if (steps.empty())
            break;
        after = steps.back()->step;
    }
    for (const Event &e : file.readEvents(0)) {
        if (e.kind == EventKind::ControlChange)
            store->addControlMark(e.step, e.text);
        else if (e.kind == EventKind::Warning && e.layer >= 0)
            store->addWarning(e.step, e.layer, e.text);
    }
    return store;
}

}  // namespace

RunComparison::RunComparison(QObject *parent) : QObject(parent) {}

void RunComparison::open(const QString &other, const QString &current) { start(other, current, true); }

void RunComparison::compareAgain(const QString &current)
{
    if (loading_)
        again_ = current;
    else if (shown())
        start(otherPath_, current, false);
}

void RunComparison::close()
{
    job_.cancel();
    loading_ = false;
    again_.clear();
    const bool was = shown();
    store_.reset();
    diff_.reset();
    otherPath_.clear();
    if (was)
        Q_EMIT shownChanged();
}

void RunComparison::start(const QString &other, const QString &current, bool withStore)
{
    loading_ = true;
    job_.start([this, other, otherPath = other.toStdString(), currentPath = current.toStdString(),
                withStore](const std::atomic<bool> &, const BackgroundJob::Post &) -> BackgroundJob::Delivery {
        std::shared_ptr<const RunStore> store;
        std::optional<RunDiff> diff;
        try {
            const RunFile b(otherPath);
            if (withStore)
                store = storeOf(b);
            try {  // the window's own file may not hold its run yet: the plots compare meanwhile
                if (!currentPath.empty())
                    diff = diffRuns(RunFile(currentPath), b, 0.0);
            } catch (const RunFileError &) {
            }
        } catch (const std::exception &e) {
            return [this, error = QString::fromStdString(e.what())] {
                loading_ = false;
                again_.clear();
                Q_EMIT failed(error);
            };
        }
        return [this, other, store, diff, withStore] {
            loading_ = false;
            if (withStore) {
                otherPath_ = other;
                store_ = store;
            }
            diff_ = diff;
            Q_EMIT shownChanged();
            if (!again_.isEmpty()) {  // the window's run ended while this was read
                const QString current = std::exchange(again_, QString());
                start(otherPath_, current, false);
            }
        };
    });
}

}  // namespace nanscope
