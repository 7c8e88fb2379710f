#pragma once
// The rank x layer view of one step of a data-parallel job (docs/ranks.md): which rank, and which
// layer on it, went non-finite before the all-reduce. Reads one step of each rank's run file when
// the step changes: a few small queries, no training state.
#include "nanscope/job_folder.h"

#include <QElapsedTimer>
#include <QWidget>

class QLabel;
class QPushButton;
class QSpinBox;
class QTableView;

namespace nanscope {

class RankLayerModel;

class RankStepView final : public QWidget {
    Q_OBJECT
public:
    explicit RankStepView(QWidget *parent = nullptr);

    // A job opened: shows the step where it went non-finite first (`first`, as
    // firstJobFailure() found it; step 0 when it never did).
    void setJob(const std::vector<JobRank> &ranks, const JobFailure &first);
    void clear();
    void showStep(int step);
    // Reads the step again when a rank had not recorded it yet (a job still running), at most
    // once a second.
    void refreshIfIncomplete();
    int step() const;
    JobFailure firstFailure() const { return first_; }
    QString summaryText() const;
    RankLayerModel *model() const { return model_; }
    QTableView *table() const { return table_; }

Q_SIGNALS:
    // A cell was activated (double-click, Enter): show that rank's run at that layer.
    void rankLayerActivated(int rank, int layer);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();
    QLabel *stepLabel_ = nullptr;
    void read();
    void describe();
    bool incomplete() const;    // a rank has not recorded the step shown (yet)
    void refreshIn(qint64 ms);  // one refreshIfIncomplete() later, not one per call

    std::vector<JobRank> ranks_;
    JobFailure first_;
    RankLayerModel *model_ = nullptr;
    QLabel *summary_ = nullptr;
    QSpinBox *stepBox_ = nullptr;
    QPushButton *firstButton_ = nullptr;
    QTableView *table_ = nullptr;
    QElapsedTimer sinceRead_;
    bool refreshQueued_ = false;
};

}  // namespace nanscope
