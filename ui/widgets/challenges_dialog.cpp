#include "widgets/challenges_dialog.h"

#include "models/core_text.h"

#include "nanscope/challenge.h"

#include <QDialogButtonBox>
#include <QEvent>
#include <QHeaderView>
#include <QTableWidget>
#include <QVBoxLayout>

namespace nanscope {

ChallengesDialog::ChallengesDialog(QWidget *parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("challengesDialog"));
    table_ = new QTableWidget(0, 3);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setWordWrap(true);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    auto *column = new QVBoxLayout(this);
    column->addWidget(table_);
    column->addWidget(buttons);
    resize(820, 460);
    fill();
}

void ChallengesDialog::showStates(const QMap<QString, ChallengeState> &states)
{
    states_ = states;
    fill();
}

void ChallengesDialog::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        fill();
    QDialog::changeEvent(event);
}

void ChallengesDialog::fill()
{
    setWindowTitle(tr("Challenges"));
    table_->setHorizontalHeaderLabels({tr("Scenario"), tr("Goal"), tr("This session")});
    table_->setRowCount(int(challenges().size()));
    int row = 0;
    for (const Challenge &c : challenges()) {
        const QString id = QString::fromStdString(c.scenario);
        const ChallengeState state = states_.value(id, ChallengeState::NotTried);
        const QString stateText = state == ChallengeState::Solved ? tr("✔ solved")
                                  : state == ChallengeState::Tried ? tr("tried")
                                                                   : tr("not tried");
        table_->setItem(row, 0, new QTableWidgetItem(id));
        table_->setItem(row, 1, new QTableWidgetItem(coreText(c.goal)));
        auto *stateItem = new QTableWidgetItem(stateText);
        if (state == ChallengeState::Solved)
            stateItem->setForeground(QColor(0x2e, 0x7d, 0x32));
        table_->setItem(row, 2, stateItem);
        ++row;
    }
    table_->resizeColumnToContents(0);
    table_->resizeColumnToContents(2);
    table_->resizeRowsToContents();
}

}  // namespace nanscope
