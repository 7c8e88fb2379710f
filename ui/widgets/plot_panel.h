#pragma once
// The loss, gradient-norm (before and after clipping), learning-rate and (once a run scales its
// loss) loss-scale plots on one shared step axis: zoom and pan with the mouse (double-click fits again), a log-scale
// toggle, a vertical line labelled with each control change, and a cursor at the selected step.
#include "widgets/plot_series.h"

#include <QWidget>

#include <utility>

class QCheckBox;
class QCustomPlot;
class QPushButton;
class QCPGraph;
class QCPItemStraightLine;

namespace nanscope {

class RunStore;

class PlotPanel final : public QWidget {
    Q_OBJECT
public:
    explicit PlotPanel(QWidget *parent = nullptr);

    void clear();
    void refresh(const RunStore &store);
    void setLogScale(bool on);
    // The loss or gradient norm spans more than this many decades: the value axes turn
    // logarithmic by themselves, unless the user chose.
    static constexpr double kAutoLogDecades = 3.0;
    // A second run drawn over this one's loss, gradient norm and learning rate, dashed, a legend
    // naming each; null takes it away. `other` must live until then; refresh() draws it again.
    void setComparison(const RunStore *other, const QString &thisName, const QString &otherName);
    bool comparing() const { return compared_ != nullptr; }
    // A stretch of the run read back from its file (run/stretch_read.h): its buckets replace the
    // store's in the steps it covers. Null: the store's alone. `stretch` must live until then.
    void setStretch(const RunStore *stretch);
    // Whether the step axis fits the run and follows new steps (false once the user zooms or
    // pans), and the steps it shows.
    bool followingRun() const { return followRun_; }
    std::pair<int, int> shownSteps() const;
    // Shows steps first..last as a user's zoom would (stops following the run).
    void showSteps(int first, int last);
    // Fits the run and follows it again, as Fit or a double-click does.
    void fitRun();
    void setCursorStep(int step);  // -1 hides the cursor
    int cursorStep() const { return cursorStep_; }

    QCustomPlot *lossPlot() const { return plots_[0]; }
    QCustomPlot *gradPlot() const { return plots_[1]; }
    QCustomPlot *lrPlot() const { return plots_[2]; }
    QCustomPlot *lossScalePlot() const { return plots_[3]; }
    int skippedMarkerCount() const;
    int controlMarkCount() const { return markCount_; }

    // Both write every plot into one image or one vector page.
    bool exportPng(const QString &path, QString *error);
    bool exportPdf(const QString &path, QString *error);

Q_SIGNALS:
    void stepClicked(int step);
    // The step axis moved: the user zoomed or panned, or it fitted the run again.
    void stepRangeChanged();

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();
    void syncStepAxes(const QCustomPlot *source);
    void fitSteps();
    void showControlMarks(const RunStore &store);
    void replotAll();
    void showComparison();

    static constexpr int kPlots = 4;
    QCustomPlot *plots_[kPlots] = {};
    SeriesGraphs loss_, grad_, clipped_, lr_, scale_;
    const RunStore *compared_ = nullptr;
    const RunStore *stretch_ = nullptr;
    SeriesGraphs comparedLoss_, comparedGrad_, comparedLr_;
    QCPGraph *skipped_ = nullptr;
    QCheckBox *logScale_ = nullptr;
    QPushButton *fit_ = nullptr;
    QCPItemStraightLine *cursors_[kPlots] = {};
    int cursorStep_ = -1;
    int markCount_ = 0;
    bool followRun_ = true;        // false once the user zooms or pans, until a double-click
    bool userChoseScale_ = false;  // the user ticked or unticked Log scale: no automatic choice
    bool syncing_ = false;
    QPoint pressPos_;
    int lastStep_ = 0;
    int firstStep_ = 0;
};

}  // namespace nanscope
