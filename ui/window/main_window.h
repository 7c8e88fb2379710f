#pragma once
// The NaNScope window: controls on the left; loss, gradient-norm and LR plots over the layer x
// step NaN map in the centre; the layer tree, the origin panel and the lesson on the right; the
// event log below. It sees a RunSource only through SessionController, which carries every command
// and every record, and never owns training state; every view is fed from one bounded RunStore at
// most ~30 times a second.
#include "run/run_store.h"
#include "window/session_controller.h"

#include "nanscope/keep_policy.h"
#include "nanscope/recorded_run.h"

#include <QMainWindow>
#include <QElapsedTimer>
#include <QMap>

class QAction;
class QComboBox;
class QDockWidget;
class QMenu;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTimer;
class QTreeView;

namespace nanscope {

class ChallengeBox;
class ChallengesDialog;
class ClassroomController;
class ControlPanel;
class EventLogModel;
class LayerTreeModel;
class LessonPane;
class NanMapView;
class OriginPanel;
class ModelOpener;
class PlotPanel;
class RankStepView;
class JobController;
class ReplayRunner;
class RunFiles;
class RunComparison;
class StretchLoader;
class ZoomController;
class ComparisonPanel;

class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    // `live` makes the source the window trains (app/live_session.h: a Session); without
    // `source`, the window starts on one of those.
    explicit MainWindow(RunSourceFactory live, std::unique_ptr<RunSource> source = nullptr,
                        QWidget *parent = nullptr);
    ~MainWindow() override;

    void selectScenario(const QString &id);
    void openModel(const QString &path);  // probe the file, then the input dialog (window-modal)
    void setSteps(int steps);
    bool startRun();
    void resetRun();
    void selectLayer(int layer);
    void selectStep(int step);
    void setPresentationMode(bool on);

    bool exportCsv(const QString &path, QString *error);

    // Run files (main_window_runs.cpp). openRun() shows a recorded run, following it while its
    // writer still writes; a file it cannot read gets a message box and returns false.
    // A long run opens from its chunks (RecordedRunOptions::chunkedAbove), a very long one from its
    // coarse chunks first (coarseAbove); tests and benchmarks set the thresholds, -1: never.
    // A data-parallel job's run folder (rank-R.nsrun files) opens as one job: the rank that went
    // non-finite first, and a rank selector in the run tool bar that opens another rank's file.
    bool openRun(const QString &path, bool follow = true);
    QComboBox *rankSelector() const { return rankBox_; }
    bool showingJob() const;                              // the rank selector is in the tool bar (JobController)
    RankStepView *rankView() const { return rankView_; }  // the job's rank x layer view of a step
    void setOpenChunkedAbove(int steps) { openChunkedAbove_ = steps; }
    void setOpenCoarseAbove(int steps) { openCoarseAbove_ = steps; }
    void closeRun();  // back to training live
    // The source is watched, not trained here (a run file, a job's rank, pushed records): it cannot
    // start a run, so the controls are read-only and File › Close run trains live again.
    bool showingRecordedRun() const { return !controller_.capabilities().start; }
    // The run file of what the window shows: the one opened, or the one it records a live run into
    // (RunFiles: the recording, the recent runs, a copy saved elsewhere).
    RunFiles *runFiles() const { return files_; }
    QString runFile() const;
    bool saveRunAs(const QString &path, QString *error);
    QStringList recentRuns() const;
    // Where the window records the runs it trains (the newest RunFiles::kRecordedRunsKept are kept).
    static QString runsFolder();
    // What those files keep of each layer's health (`auto` unless set; `nanscope --keep`); from
    // the next run on.
    void setRecordingKeep(const KeepPolicy &keep);

    // A second run beside this one (main_window_compare.cpp): read on a thread, then drawn dashed
    // over the plots with the Comparison dock; a file that cannot be read gets a message box.
    void compareWith(const QString &path);
    void closeComparison();
    RunComparison *comparison() const { return comparison_; }
    ComparisonPanel *comparisonPanel() const { return comparisonPanel_; }

    // Zooming into a stretch of the run (ZoomController): once the plots stop following the run,
    // the steps they show are read back from the run file at the finest detail that fits
    // (run/stretch_read.h) and drawn in the plots and the map until they follow the run again.
    StretchLoader *stretchLoader() const;

    SessionController &controller() { return controller_; }
    const RunStore &store() const { return store_; }
    ControlPanel *controlPanel() const { return controls_; }
    PlotPanel *plots() const { return plots_; }
    NanMapView *nanMap() const { return map_; }
    LayerTreeModel *layerModel() const { return layerModel_; }
    QTreeView *layerView() const { return layerView_; }
    EventLogModel *eventModel() const { return eventModel_; }
    OriginPanel *originPanel() const { return origin_; }
    LessonPane *lessonPane() const { return lesson_; }
    ChallengeBox *challengeBox() const { return challengeBox_; }
    // Brings a dock to the front by name (origin, lesson, ranks, comparison); false for another.
    bool raiseDock(const QString &name);
    ChallengesDialog *challengesDialog() const;
    ModelOpener *modelOpener() const { return modelOpener_; }
    ReplayRunner *replayRunner() const { return replayRunner_; }
    QAction *action(const QString &objectName) const;
    QCustomPlot *lossPlot() const;
    int recordsShown() const { return int(store_.stepsSeen()); }
    QString originText() const;
    QString statusText() const;

Q_SIGNALS:
    void runEnded();

protected:
    void changeEvent(QEvent *event) override;
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void buildDocks();
    void buildActions();
    // The window's own texts in the current language (main_window_language.cpp); its panels
    // retranslate themselves on the same QEvent::LanguageChange.
    void retranslate();
    void buildLanguageMenu(QMenu *view);
    void onRunBegun(int run);
    void onChunks(const QVector<StepChunkPtr> &chunks);
    void onRecords(const QVector<StepRecordPtr> &records);
    void showFirstOrigin();
    void onEvents(const QVector<Event> &events);
    void onState(SessionState state);
    void onFinished(const QString &error);
    void updateActions();
    void updateStatus();
    void exportDialog(const QString &kind);
    void showError(const QString &title, const QString &message);
    void warn(const QString &title, const QString &message);  // showError plus a window-modal box
    void showLesson();  // of what the controls have chosen (ClassroomController)
    void fillRecentRunsMenu();
    void applyRecordedRunLook();
    bool openRunFile(const QString &path, bool follow);
    void buildComparison();
    void compareDialog();
    void showComparison();
    // Capsules and replay (main_window_replay.cpp).
    void buildReplay();
    void saveStep();
    void replayStep();

    SessionController controller_;
    RunStore store_;
    ControlPanel *controls_ = nullptr;
    PlotPanel *plots_ = nullptr;
    NanMapView *map_ = nullptr;
    LayerTreeModel *layerModel_ = nullptr;
    QSortFilterProxyModel *layerProxy_ = nullptr;
    QTreeView *layerView_ = nullptr;
    QLineEdit *layerFilter_ = nullptr;
    EventLogModel *eventModel_ = nullptr;
    QTableView *eventView_ = nullptr;
    OriginPanel *origin_ = nullptr;
    LessonPane *lesson_ = nullptr;
    ChallengeBox *challengeBox_ = nullptr;
    ClassroomController *classroom_ = nullptr;  // lessons, challenges and the session's verdicts
    ModelOpener *modelOpener_ = nullptr;
    QString modelGuessNote_;
    QComboBox *rankBox_ = nullptr;   // the ranks of an opened job
    QAction *rankAction_ = nullptr;  // its place in the run tool bar
    RankStepView *rankView_ = nullptr;
    QDockWidget *rankDock_ = nullptr;
    JobController *jobs_ = nullptr;  // which rank of an opened job is shown
    QLabel *stateLabel_ = nullptr;
    QLabel *stepLabel_ = nullptr;
    QLabel *rateLabel_ = nullptr;
    QLabel *deviceLabel_ = nullptr;
    StepRecordPtr lastRecord_;
    int openChunkedAbove_ = RecordedRunOptions{}.chunkedAbove;
    int openCoarseAbove_ = RecordedRunOptions{}.coarseAbove;
    SessionState state_ = SessionState::Idle;
    QElapsedTimer rateClock_;
    long long rateSteps_ = 0;
    double stepsPerSecond_ = 0;
    bool originShown_ = false;
    QFont normalFont_;
    RunFiles *files_ = nullptr;  // the run file shown or recorded into, the recent runs
    QMenu *recentMenu_ = nullptr;
    ReplayRunner *replayRunner_ = nullptr;
    RunComparison *comparison_ = nullptr;
    ComparisonPanel *comparisonPanel_ = nullptr;
    QDockWidget *comparisonDock_ = nullptr;
    ZoomController *zoom_ = nullptr;
};

}  // namespace nanscope
