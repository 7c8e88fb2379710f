#pragma once
// A second run shown beside the window's own (File › Compare with…): its file read on a
// BackgroundJob into a RunStore for the plots, and compared with the window's run file (diffRuns)
// for the comparison panel, so the window never waits for a long file. One comparison at a time;
// a newer open() or close() drops what an older read still delivers.
#include "run/run_store.h"
#include "window/background_job.h"

#include "nanscope/run_diff.h"

#include <QObject>
#include <QString>

#include <memory>
#include <optional>

namespace nanscope {

class RunComparison final : public QObject {
    Q_OBJECT
public:
    explicit RunComparison(QObject *parent = nullptr);

    // Reads `other`; `current` (empty for a run not in a file) is compared with it.
    void open(const QString &other, const QString &current);
    // Compares the window's run file with the open comparison again (a live run went on); while
    // the comparison is still being read, once it has been.
    void compareAgain(const QString &current);
    void close();

    bool shown() const { return store_ != nullptr; }
    bool loading() const { return loading_; }
    QString otherPath() const { return otherPath_; }
    const RunStore *store() const { return store_.get(); }
    // Null when the window's run has no file yet.
    const RunDiff *diff() const { return diff_ ? &*diff_ : nullptr; }

Q_SIGNALS:
    void shownChanged();  // a comparison appeared, changed or went
    void failed(const QString &message);

private:
    void start(const QString &other, const QString &current, bool withStore);

    bool loading_ = false;
    QString otherPath_;
    QString again_;  // the run file to compare again once the read under way is delivered
    std::shared_ptr<const RunStore> store_;  // made on the worker, handed over whole
    std::optional<RunDiff> diff_;
    BackgroundJob job_;  // the last member: destroyed (cancelled, waited for) first
};

}  // namespace nanscope
