// MainWindow's menus, toolbar and shortcuts, and the files that go in and out of it: models and
// runs opened or dropped, plots and step data exported. The rest of the window is in main_window.cpp.
#include "window/main_window.h"

#include "window/classroom_controller.h"
#include "widgets/control_panel.h"
#include "window/model_opener.h"
#include "window/run_files.h"
#include "widgets/origin_panel.h"
#include "widgets/plot_panel.h"

#include "nanscope/run_file.h"

#include <QAction>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QStatusBar>
#include <QComboBox>
#include <QToolBar>


namespace nanscope {

void MainWindow::buildActions()
{
    // Texts and tooltips are set by retranslate() (main_window_language.cpp), now and whenever
    // the language changes.
    auto make = [this](const QString &name, const QKeySequence &key, auto slot) {
        auto *a = new QAction(this);
        a->setObjectName(name);
        a->setShortcut(key);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    SessionController &c = controller_;
    QAction *start = make(QStringLiteral("start"), QKeySequence(Qt::Key_F5), [this] { startRun(); });
    QAction *pause = make(QStringLiteral("pause"), QKeySequence(Qt::Key_F6), [&c] { c.pause(); });
    QAction *resume = make(QStringLiteral("resume"), QKeySequence(Qt::Key_F7), [this, &c] {
        c.resume();
        origin_->decided();
    });
    QAction *step = make(QStringLiteral("step"), QKeySequence(Qt::Key_F10), [this, &c] {
        c.stepOnce(1);
        origin_->decided();
    });
    QAction *stop = make(QStringLiteral("stop"), QKeySequence(Qt::SHIFT | Qt::Key_F5), [&c] { c.stop(); });
    QAction *reset =
        make(QStringLiteral("reset"), QKeySequence(Qt::CTRL | Qt::Key_R), [this] { resetRun(); });
    QAction *rollback =
        make(QStringLiteral("rollback"), QKeySequence(Qt::CTRL | Qt::Key_B), [this, &c] {
            c.requestRollback();
            origin_->decided();
        });
    QToolBar *bar = addToolBar(QString());
    bar->setObjectName(QStringLiteral("runToolBar"));
    QMenu *run = menuBar()->addMenu(QString());
    run->setObjectName(QStringLiteral("runMenu"));
    for (QAction *a : {start, pause, resume, step, stop, reset, rollback}) {
        bar->addAction(a);
        run->addAction(a);
    }
    rankBox_ = new QComboBox(this);
    rankBox_->setObjectName(QStringLiteral("rankSelector"));
    rankAction_ = bar->addWidget(rankBox_);
    rankAction_->setVisible(false);
    run->addSeparator();
    QAction *saveStepAction = make(QStringLiteral("saveStep"), QKeySequence(Qt::CTRL | Qt::Key_K),
                                   [this] { saveStep(); });
    run->addAction(saveStepAction);

    QMenu *file = menuBar()->addMenu(QString());
    file->setObjectName(QStringLiteral("fileMenu"));
    menuBar()->insertMenu(run->menuAction(), file);
    file->addAction(
        make(QStringLiteral("openModel"), QKeySequence::Open, [this] { modelOpener_->browse(); }));
    file->addAction(
        make(QStringLiteral("openRun"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), [this] {
            const QString path = QFileDialog::getOpenFileName(this, tr("Open run"), runsFolder(),
                                                              tr("NaNScope runs (*.nsrun);;All files (*)"));
            if (!path.isEmpty())
                openRun(path);
        }));
    file->addAction(make(QStringLiteral("openJob"), QKeySequence(), [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Open a job's run folder"), runsFolder());
        if (!folder.isEmpty())
            openRun(folder);
    }));
    recentMenu_ = file->addMenu(QString());
    recentMenu_->setObjectName(QStringLiteral("recentRuns"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentRunsMenu);
    file->addAction(make(QStringLiteral("saveRunAs"), QKeySequence::SaveAs, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save run as"),
                                                          controls_->runName() + QString::fromLatin1(kRunFileExtension),
                                                          tr("NaNScope runs (*.nsrun)"));
        if (path.isEmpty())
            return;
        QString error;
        if (!saveRunAs(path, &error))
            warn(tr("Cannot save the run"), error);
        else
            statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
    }));
    QAction *closeRunAction =
        make(QStringLiteral("closeRun"), QKeySequence(Qt::CTRL | Qt::Key_W), [this] { closeRun(); });
    closeRunAction->setEnabled(false);
    file->addAction(closeRunAction);
    file->addSeparator();
    file->addAction(make(QStringLiteral("compareWith"), QKeySequence(), [this] { compareDialog(); }));
    QAction *closeComparisonAction = make(QStringLiteral("closeComparison"), QKeySequence(),
                                          [this] { closeComparison(); });
    closeComparisonAction->setEnabled(false);
    file->addAction(closeComparisonAction);
    file->addSeparator();
    file->addAction(make(QStringLiteral("exportPng"), QKeySequence(),
                         [this] { exportDialog(QStringLiteral("png")); }));
    file->addAction(make(QStringLiteral("exportPdf"), QKeySequence(),
                         [this] { exportDialog(QStringLiteral("pdf")); }));
    file->addAction(make(QStringLiteral("exportCsv"), QKeySequence(Qt::CTRL | Qt::Key_E), [this] { exportDialog(QStringLiteral("csv")); }));
    file->addSeparator();
    file->addAction(make(QStringLiteral("quit"), QKeySequence::Quit, [this] { close(); }));

    QMenu *view = menuBar()->addMenu(QString());
    view->setObjectName(QStringLiteral("viewMenu"));
    QAction *presentation = make(QStringLiteral("presentation"), QKeySequence(Qt::Key_F11),
                                 [this](bool on) { setPresentationMode(on); });
    presentation->setCheckable(true);
    view->addAction(presentation);
    QAction *log = make(QStringLiteral("logScale"), QKeySequence(Qt::CTRL | Qt::Key_L),
                        [this](bool on) { plots_->setLogScale(on); });
    log->setCheckable(true);
    view->addAction(log);
    auto *challenges = new QAction(this);
    challenges->setObjectName(QStringLiteral("challenges"));
    connect(challenges, &QAction::triggered, classroom_, &ClassroomController::showChallenges);
    view->addAction(challenges);
    view->addSeparator();
    for (QDockWidget *d : findChildren<QDockWidget *>())
        view->addAction(d->toggleViewAction());
    view->addSeparator();
    buildLanguageMenu(view);
}

bool MainWindow::raiseDock(const QString &name)
{
    const QStringList tabs{QStringLiteral("origin"), QStringLiteral("lesson"), QStringLiteral("ranks"),
                           QStringLiteral("comparison")};
    auto *dock = tabs.contains(name) ? findChild<QDockWidget *>(name) : nullptr;
    if (!dock)
        return false;
    dock->show();
    dock->raise();
    return true;
}

QAction *MainWindow::action(const QString &objectName) const { return findChild<QAction *>(objectName); }

void MainWindow::openModel(const QString &path) { modelOpener_->open(path); }

void MainWindow::updateActions()
{
    // A source that cannot be steered (a recorded run) keeps these off whatever its state.
    const RunCapabilities can = controller_.capabilities();
    const bool active = state_ == SessionState::Running || state_ == SessionState::Paused;
    action(QStringLiteral("start"))->setEnabled(can.start);
    action(QStringLiteral("pause"))->setEnabled(can.steer && state_ == SessionState::Running);
    action(QStringLiteral("resume"))->setEnabled(can.steer && state_ == SessionState::Paused);
    action(QStringLiteral("step"))->setEnabled(can.steer && active);
    action(QStringLiteral("stop"))->setEnabled(can.steer && active);
    action(QStringLiteral("rollback"))->setEnabled(can.rollback && active);
    action(QStringLiteral("saveStep"))->setEnabled(can.capsules && active && files_->recording());
}

bool MainWindow::exportCsv(const QString &path, QString *error) { return files_->exportCsv(path, error); }

void MainWindow::exportDialog(const QString &kind)
{
    const QString filter = kind == QLatin1String("csv")   ? tr("CSV files (*.csv)")
                           : kind == QLatin1String("pdf") ? tr("PDF files (*.pdf)")
                                                          : tr("PNG images (*.png)");
    QString path =
        QFileDialog::getSaveFileName(this, tr("Export"), controls_->runName() + QLatin1Char('.') + kind, filter);
    if (path.isEmpty())
        return;
    QString error;
    const bool ok = kind == QLatin1String("csv")   ? exportCsv(path, &error)
                    : kind == QLatin1String("pdf") ? plots_->exportPdf(path, &error)
                                                   : plots_->exportPng(path, &error);
    if (!ok)
        showError(tr("Export failed"), error);
    else
        statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

namespace {

// The one .nsrun file a drop carries, else empty.
QString runPathIn(const QMimeData *mime)
{
    if (!mime || !mime->hasUrls() || mime->urls().size() != 1 || !mime->urls().constFirst().isLocalFile())
        return {};
    const QString path = mime->urls().constFirst().toLocalFile();
    return path.endsWith(QString::fromLatin1(kRunFileExtension), Qt::CaseInsensitive) ? path : QString();
}

}  // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (!modelPathIn(event->mimeData()).isEmpty() || !runPathIn(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    if (const QString run = runPathIn(event->mimeData()); !run.isEmpty()) {
        event->acceptProposedAction();
        QMetaObject::invokeMethod(
            this, [this, run] { openRun(run); }, Qt::QueuedConnection);
        return;
    }
    const QString path = modelPathIn(event->mimeData());
    if (path.isEmpty())
        return;
    event->acceptProposedAction();
    // After the drop returns: the drag source must not wait on the input dialog.
    QMetaObject::invokeMethod(
        this, [this, path] { openModel(path); }, Qt::QueuedConnection);
}

}  // namespace nanscope
