#pragma once
// A data-parallel job's run folder (rank-R.nsrun files) opened as one job: the window shows the
// rank that went non-finite first, the rank selector in the run tool bar opens another rank's
// file, and the Ranks dock (RankStepView) shows every rank at the step shown, where activating a
// cell opens that rank at that layer and step. It owns which rank is shown; opening a file is the
// window's (`openFile`).
#include <QObject>
#include <QString>

#include <functional>

class QAction;
class QComboBox;
class QDockWidget;

namespace nanscope {

class RankStepView;

class JobController final : public QObject {
    Q_OBJECT
public:
    // Opens a run file, following it while it is written or not: the window's.
    using OpenFile = std::function<bool(const QString &path, bool follow)>;
    // `rankAction`: the rank selector's place in the tool bar, shown while a job is.
    JobController(QComboBox *rankBox, QAction *rankAction, RankStepView *view, QDockWidget *dock, OpenFile openFile,
                  QObject *parent = nullptr);

    // Opens the job in `folder` at its first failing rank (else rank 0); false, with the reason
    // in `error`, for a folder that is not a job's or a rank that cannot be opened.
    bool open(const QString &folder, bool follow, QString *error);
    void leave();  // a single run shown again: the selector and the dock go
    bool showing() const;
    // The rank selector's item `index`, with `layer` (-1: none) and the step shown chosen again
    // once its run has begun (takeChoice()).
    bool openRank(int index, int layer);
    // The layer and step to show once the newly opened rank's run has begun: false when none.
    bool takeChoice(int *layer, int *step);

Q_SIGNALS:
    void opened(const QString &message);        // a job opened: what the status bar says
    void choose(int layer, int step);           // the rank shown already: show this layer and step

private:
    void showRank(int rank, int layer);  // the rank x layer view's cell activated

    QComboBox *box_;
    QAction *action_;
    RankStepView *view_;
    QDockWidget *dock_;
    OpenFile openFile_;
    bool follow_ = true;
    int shown_ = -1;          // the selector's item the window shows
    int pendingLayer_ = -1;   // to select once the rank's run has begun
    int pendingStep_ = -1;
};

}  // namespace nanscope
