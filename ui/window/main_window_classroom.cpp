// The classroom's wiring in the window: which lesson the controls choose (ClassroomController shows
// it, with the challenge and the session's verdicts) and presentation mode.
#include "window/main_window.h"

#include "widgets/control_panel.h"
#include "widgets/lesson_pane.h"
#include "widgets/plot_series.h"
#include "window/classroom_controller.h"
#include "window/model_opener.h"

#include <QAction>

#include <qcustomplot.h>

namespace nanscope {

void MainWindow::showLesson()
{
    if (controls_->modelSelected())
        classroom_->showPage(modelPageMarkdown(controls_->modelPath(), controls_->modelInput(), modelGuessNote_));
    else
        classroom_->showScenario(controls_->scenario());
}

ChallengesDialog *MainWindow::challengesDialog() const
{
    return classroom_->dialog();
}

void MainWindow::setPresentationMode(bool on)
{
    QFont f = normalFont_;
    if (on)
        f.setPointSizeF(normalFont_.pointSizeF() * 1.6);
    setFont(f);
    lesson_->setFont(f);
    for (QCustomPlot *plot : findChildren<QCustomPlot *>())
        setPlotFontSize(plot, f.pointSizeF());
    if (QAction *a = action(QStringLiteral("presentation")); a && a->isChecked() != on)
        a->setChecked(on);
}

}  // namespace nanscope
