// MainWindow's own texts (menus, tool bar, actions, dock titles, status bar) set in the current
// language, and View › Language. Each panel sets its own texts on the same LanguageChange event.
#include "window/main_window.h"

#include "models/event_log_model.h"
#include "models/layer_tree_model.h"
#include "widgets/language.h"
#include "window/run_comparison.h"

#include <QAction>
#include <QActionGroup>
#include <QComboBox>
#include <QDockWidget>
#include <QEvent>
#include <QLineEdit>
#include <QMenu>
#include <QToolBar>

namespace nanscope {

void MainWindow::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QMainWindow::changeEvent(event);
}

void MainWindow::retranslate()
{
    // An action's tooltip is its text with the shortcut, unless it needs a sentence of its own.
    struct ActionText {
        const char *name;
        QString text;
        QString tip;
    };
    const ActionText actions[] = {
        {"start", tr("&Start"), {}},
        {"pause", tr("&Pause"), {}},
        {"resume", tr("&Resume"), {}},
        {"step", tr("S&tep"), {}},
        {"stop", tr("St&op"), {}},
        {"reset", tr("R&eset"), tr("Stop and clear the run (plots, map, tree, log); your controls stay")},
        {"rollback", tr("Roll &back"), {}},
        {"saveStep", tr("Save this step"),
         tr("Keep a capsule of the paused step (or of the next step) in the run file, to replay it anywhere")},
        {"openModel", tr("&Open model…"), {}},
        {"openRun", tr("Open &run…"), {}},
        {"openJob", tr("Open &job folder…"), {}},
        {"saveRunAs", tr("&Save run as…"), {}},
        {"closeRun", tr("&Close run"), {}},
        {"compareWith", tr("Com&pare with…"), {}},
        {"closeComparison", tr("Close compa&rison"), {}},
        {"exportPng", tr("Export plots as &PNG…"), {}},
        {"exportPdf", tr("Export plots as P&DF…"), {}},
        {"exportCsv", tr("Export step data as &CSV…"), {}},
        {"quit", tr("&Quit"), {}},
        {"presentation", tr("&Presentation mode"), {}},
        {"logScale", tr("&Log scale"), {}},
        {"challenges", tr("&Challenges…"), tr("Every scenario's challenge and whether this session met it")},
    };
    for (const ActionText &t : actions) {
        QAction *a = action(QString::fromLatin1(t.name));
        a->setText(t.text);
        const QString tip = t.tip.isEmpty() ? QString(t.text).remove(QLatin1Char('&')) : t.tip;
        const QString key = a->shortcut().toString(QKeySequence::NativeText);
        a->setToolTip(key.isEmpty() ? tip : QStringLiteral("%1 (%2)").arg(tip, key));
    }
    const std::pair<const char *, QString> menus[] = {
        {"fileMenu", tr("&File")}, {"runMenu", tr("&Run")}, {"viewMenu", tr("&View")}, {"languageMenu", tr("&Language")}};
    for (const auto &[name, title] : menus)
        findChild<QMenu *>(QString::fromLatin1(name))->setTitle(title);
    recentMenu_->setTitle(tr("Open r&ecent run"));
    findChild<QToolBar *>(QStringLiteral("runToolBar"))->setWindowTitle(tr("Run"));
    rankBox_->setToolTip(tr("The rank of the opened job whose run the window shows"));
    const std::pair<const char *, QString> docks[] = {
        {"controls", tr("Controls")}, {"layers", tr("Layers")},         {"origin", tr("Origin")},
        {"lesson", tr("Lesson")},     {"ranks", tr("Ranks")},           {"comparison", tr("Comparison")},
        {"eventLog", tr("Event log")}};
    for (const auto &[name, title] : docks)
        findChild<QDockWidget *>(QString::fromLatin1(name))->setWindowTitle(title);
    layerFilter_->setPlaceholderText(tr("Filter layers…"));
    // Item models are not widgets: no LanguageChange reaches them.
    layerModel_->retranslate();
    eventModel_->retranslate();
    applyRecordedRunLook();
    if (comparison_->shown())
        showComparison();  // the legend's and the panel's sentences
    showLesson();
    updateStatus();
}

void MainWindow::buildLanguageMenu(QMenu *view)
{
    QMenu *menu = view->addMenu(QString());
    menu->setObjectName(QStringLiteral("languageMenu"));
    auto *group = new QActionGroup(menu);
    for (const QString &code : availableLanguages()) {
        // Each language in its own name, never translated: a reader finds it whatever is shown.
        QAction *a = menu->addAction(languageNativeName(code));
        a->setObjectName(QStringLiteral("language_") + code);
        a->setCheckable(true);
        a->setChecked(code == currentLanguage());
        group->addAction(a);
        connect(a, &QAction::triggered, this, [code] { setLanguage(code); });
    }
}

}  // namespace nanscope
