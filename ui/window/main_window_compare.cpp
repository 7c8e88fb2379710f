// MainWindow's comparison with a second run (File › Compare with…): the second run dashed over the
// plots, and the Comparison dock with what differs. It works on a live run too: the compared file
// is drawn at once, and the window's own run file is compared with it again when the run ends.
#include "window/main_window.h"

#include "widgets/comparison_panel.h"
#include "widgets/nan_map_view.h"
#include "widgets/plot_panel.h"
#include "window/run_comparison.h"
#include "window/run_files.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QStatusBar>

namespace nanscope {

namespace {

QString nameOf(const QString &path, const QString &fallback)
{
    const QString name = QFileInfo(path).completeBaseName();
    return name.isEmpty() ? fallback : name;
}

}  // namespace

void MainWindow::buildComparison()
{
    comparison_ = new RunComparison(this);
    connect(comparison_, &RunComparison::shownChanged, this, &MainWindow::showComparison);
    connect(comparison_, &RunComparison::failed, this,
            [this](const QString &message) { warn(tr("Cannot compare the runs"), message); });
    connect(comparisonPanel_, &ComparisonPanel::stepActivated, this, &MainWindow::selectStep);
    connect(this, &MainWindow::runEnded, this, [this] { comparison_->compareAgain(files_->path()); });
}

void MainWindow::compareDialog()
{
    // Beside the run shown: a job's other ranks, or yesterday's run of the same folder.
    const QString folder = files_->path().isEmpty() ? runsFolder() : QFileInfo(files_->path()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Compare with"), folder,
                                                      tr("NaNScope runs (*.nsrun);;All files (*)"));
    if (!path.isEmpty())
        compareWith(path);
}

void MainWindow::compareWith(const QString &path)
{
    statusBar()->showMessage(tr("Reading %1 to compare…").arg(path), 5000);
    comparison_->open(path, files_->path());
}

void MainWindow::closeComparison() { comparison_->close(); }

void MainWindow::showComparison()
{
    QAction *close = action(QStringLiteral("closeComparison"));
    if (!comparison_->shown()) {
        plots_->setComparison(nullptr, {}, {});
        map_->setComparison(nullptr);
        comparisonPanel_->clear();
        comparisonDock_->hide();
        close->setEnabled(false);
        return;
    }
    const QString thisName = nameOf(files_->path(), tr("this run"));
    QString otherName = nameOf(comparison_->otherPath(), tr("compared run"));
    if (otherName == thisName)
        otherName = tr("%1 (compared)").arg(otherName);
    plots_->setComparison(comparison_->store(), thisName, otherName);
    const RunDiff *diff = comparison_->diff();
    const bool inLayer = diff && diff->parting.step >= 0 && healthKindWithId(diff->parting.what);
    map_->setComparison(comparison_->store(), inLayer ? diff->parting.step : -1, inLayer ? diff->parting.layer : "");
    comparisonPanel_->showDiff(comparison_->diff(), thisName, otherName);
    comparisonDock_->show();
    comparisonDock_->raise();
    close->setEnabled(true);
    statusBar()->clearMessage();  // "Reading … to compare" is done
}

}  // namespace nanscope
