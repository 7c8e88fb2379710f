#pragma once
// Reads the stretch of a run the user zoomed into back from its run file (run/stretch_read.h), on
// a BackgroundJob so that zooming and panning never wait for the file. One stretch at a time: a
// newer request() cancels the read under way between two of its reads, and what an older read
// still delivers is dropped.
#include "run/stretch_read.h"
#include "window/background_job.h"

#include <QObject>
#include <QString>

#include <memory>

namespace nanscope {

class StretchLoader final : public QObject {
    Q_OBJECT
public:
    explicit StretchLoader(QObject *parent = nullptr);

    // Reads steps first..last of run file `path` into `store` (stretchStore()).
    void request(const QString &path, std::shared_ptr<RunStore> store, int first, int last);
    // Drops the stretch and any read under way.
    void clear();
    // Whether steps first..last are shown or being read already.
    bool wants(int first, int last) const;

    bool loading() const { return loading_; }
    const RunStore *store() const { return store_.get(); }  // null: none read
    int firstStep() const { return first_; }
    int lastStep() const { return last_; }
    StretchLevel level() const { return level_; }

Q_SIGNALS:
    void loaded();  // store() holds a newly read stretch
    void failed(const QString &message);

private:
    bool loading_ = false;
    int wantFirst_ = -1, wantLast_ = -1;
    std::shared_ptr<const RunStore> store_;
    int first_ = -1, last_ = -1;
    StretchLevel level_ = StretchLevel::Steps;
    BackgroundJob job_;  // the last member: destroyed (cancelled, waited for) first
};

}  // namespace nanscope
