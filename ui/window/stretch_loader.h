#pragma once
// Reads the stretch of a run the user zoomed into back from its run file (run/stretch_read.h), on
// a thread of its own so that zooming and panning never wait for the file. One stretch at a time:
// a newer request() cancels the read under way between two of its reads, and what an older read
// still delivers is dropped.
#include "run/stretch_read.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <thread>

namespace nanscope {

class StretchLoader final : public QObject {
    Q_OBJECT
public:
    explicit StretchLoader(QObject *parent = nullptr);
    ~StretchLoader() override;  // cancels and waits for a read under way

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
    void join();

    std::thread thread_;
    std::atomic<int> number_{0};  // the current read's; an older read stops at its next read
    bool loading_ = false;
    int wantFirst_ = -1, wantLast_ = -1;
    std::shared_ptr<const RunStore> store_;
    int first_ = -1, last_ = -1;
    StretchLevel level_ = StretchLevel::Steps;
};

}  // namespace nanscope
