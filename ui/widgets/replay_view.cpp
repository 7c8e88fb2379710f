#include "widgets/replay_view.h"

#include "models/core_text.h"
#include "models/origin_text.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace nanscope {

QString verdictSentence(ReplayVerdict verdict, double tolerance)
{
    switch (verdict) {
    case ReplayVerdict::Reproduced: return QObject::tr("Reproduced bit for bit: the failure is deterministic.");
    case ReplayVerdict::ReproducedNumerically:
        return QObject::tr("Reproduced numerically: the same non-finite values, others within %1.").arg(tolerance);
    case ReplayVerdict::NotReproduced:
        return QObject::tr("Not reproduced: computed again, the step differs (a non-deterministic kernel, a race "
                           "or a hardware fault).");
    }
    return {};
}

ReplayView::ReplayView(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    replay_ = new QPushButton;
    replay_->setObjectName(QStringLiteral("replayStep"));
    verdict_ = new QLabel;
    verdict_->setObjectName(QStringLiteral("replayVerdict"));
    verdict_->setWordWrap(true);
    verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    whatIf_ = new QTableWidget(0, 3);
    whatIf_->setObjectName(QStringLiteral("replayWhatIf"));
    retranslate();
    whatIf_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    whatIf_->horizontalHeader()->setStretchLastSection(true);
    whatIf_->verticalHeader()->hide();
    whatIf_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(replay_);
    layout->addWidget(verdict_);
    layout->addWidget(whatIf_, 1);
    connect(replay_, &QPushButton::clicked, this, &ReplayView::replayRequested);
    clear();
}

void ReplayView::clear()
{
    verdict_->clear();
    whatIf_->setRowCount(0);
    whatIf_->hide();
    replay_->setEnabled(true);
}

void ReplayView::showProgress(const QString &what)
{
    replay_->setEnabled(false);
    verdict_->setText(tr("Replaying: %1…").arg(what));
}

void ReplayView::showError(const QString &message)
{
    replay_->setEnabled(true);
    verdict_->setText(tr("Cannot replay: %1").arg(message));
    whatIf_->hide();
}

void ReplayView::showReport(const ReplayReport &r)
{
    replay_->setEnabled(true);
    QStringList lines;
    lines << tr("Step %1 (%2, %3 thread(s)): %4")
                 .arg(r.step)
                 .arg(QString::fromStdString(r.device))
                 .arg(r.threads)
                 .arg(verdictSentence(r.verdict, r.tolerance));
    if (r.differsAt >= 0)
        lines << tr("First layer that differs: '%1' (%2).")
                     .arg(QString::fromStdString(r.differsAtPath), QString::fromStdString(r.differsWhat));
    if (r.origin.valid() && !r.origin.op.empty())
        lines << tr("Born in op %1 of '%2'.")
                     .arg(QString::fromStdString(r.origin.op), QString::fromStdString(r.origin.layerPath));
    if (!r.samples.empty()) {
        QStringList ids;
        for (std::int64_t s : r.samples)
            ids << QString::number(s);
        lines << tr("Samples that make it non-finite: %1 (%2 replays).")
                     .arg(ids.join(QLatin1Char(' ')))
                     .arg(r.bisectReplays);
    }
    // The notes in the window's language where the core said them as sentences.
    const bool sentences = r.noteMessages.size() == r.notes.size();
    for (std::size_t i = 0; i < r.notes.size(); ++i) {
        const QString said = sentences ? coreMessageText(r.noteMessages[i]) : QString();
        lines << (said.isEmpty() ? QString::fromStdString(r.notes[i]) : said);
    }
    verdict_->setText(lines.join(QLatin1Char('\n')));

    whatIf_->setRowCount(int(r.whatIf.size()));
    for (int i = 0; i < int(r.whatIf.size()); ++i) {
        const WhatIf &w = r.whatIf[std::size_t(i)];
        QString result = w.finite ? tr("finite") : tr("non-finite");
        if (!w.note.empty()) {
            EventMessage message = w.noteMessage;
            if (message.id.rfind("whatif-nonfinite-in", 0) == 0 && !message.args.empty())  // the phase, in words
                message.args[0] = phaseText(phaseFromName(message.args[0])).toStdString();
            const QString said = coreMessageText(message);
            result += QStringLiteral(" (%1)").arg(said.isEmpty() ? QString::fromStdString(w.note) : said);
        }
        whatIf_->setItem(i, 0, new QTableWidgetItem(QString::fromStdString(w.change)));
        whatIf_->setItem(i, 1, new QTableWidgetItem(w.from == "step" ? tr("the step") : tr("the snapshot")));
        auto *item = new QTableWidgetItem(result);
        item->setForeground(w.finite ? QColor(0, 128, 0) : QColor(180, 0, 0));
        whatIf_->setItem(i, 2, item);
    }
    whatIf_->setVisible(!r.whatIf.empty());
}

QString ReplayView::verdictText() const { return verdict_->text(); }

QStringList ReplayView::whatIfRows() const
{
    QStringList rows;
    for (int i = 0; i < whatIf_->rowCount(); ++i)
        rows << QStringLiteral("%1 | %2 | %3")
                    .arg(whatIf_->item(i, 0)->text(), whatIf_->item(i, 1)->text(), whatIf_->item(i, 2)->text());
    return rows;
}

void ReplayView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void ReplayView::retranslate()
{
    replay_->setText(tr("Re&play this step"));
    replay_->setToolTip(tr("Compute the step again from its capsule in the run file: is the failure deterministic, "
                           "which samples cause it, which change would have kept it finite?"));
    whatIf_->setHorizontalHeaderLabels({tr("Change"), tr("From"), tr("Result")});
}

}  // namespace nanscope
