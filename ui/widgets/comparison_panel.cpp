#include "widgets/comparison_panel.h"

#include "widgets/map_cell_text.h"

#include "nanscope/health_kinds.h"
#include "nanscope/run_diff.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace nanscope {

namespace {

QString partingText(const RunParting &p)
{
    if (p.step < 0)
        return ComparisonPanel::tr("Identical over every step they share.");
    QString where;
    if (p.what == "input")
        where = ComparisonPanel::tr("the input batch");
    else if (p.what == "loss")
        where = ComparisonPanel::tr("the loss");
    else
        where = ComparisonPanel::tr("the %1 of layer '%2'")
                    .arg(mapKindText(healthKindWithId(p.what)->kind), QString::fromStdString(p.layer));
    QString text = ComparisonPanel::tr("Parted at <a href=\"%1\">step %1</a>, in %2: %3.")
                       .arg(p.step)
                       .arg(where, QString::fromStdString(p.detail).toHtmlEscaped());
    if (p.paramsDiffer && p.what != "params")
        text += QLatin1Char(' ') + ComparisonPanel::tr("Its parameters differ too.");
    if (p.inputDiffers && p.what != "input")
        text += QLatin1Char(' ') + ComparisonPanel::tr("The input batches differ.");
    return text;
}

QString failureText(const QString &name, int failed, int parted)
{
    if (failed < 0)
        return ComparisonPanel::tr("%1: never non-finite.").arg(name.toHtmlEscaped());
    if (parted >= 0 && parted <= failed)
        return ComparisonPanel::tr("%1: non-finite first at step %2, the runs apart since step %3.")
            .arg(name.toHtmlEscaped())
            .arg(failed)
            .arg(parted);
    return ComparisonPanel::tr("%1: non-finite first at step %2, the runs identical until then.")
        .arg(name.toHtmlEscaped())
        .arg(failed);
}

}  // namespace

ComparisonPanel::ComparisonPanel(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::RichText);
    summary_->setTextInteractionFlags(Qt::TextBrowserInteraction);
    connect(summary_, &QLabel::linkActivated, this, [this](const QString &step) { Q_EMIT stepActivated(step.toInt()); });
    settings_ = new QTableWidget(0, 3);
    settings_->horizontalHeader()->setStretchLastSection(true);
    settings_->verticalHeader()->setVisible(false);
    settings_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(summary_);
    layout->addWidget(settings_, 1);
    retranslate();
    clear();
}

void ComparisonPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void ComparisonPanel::retranslate()
{
    settings_->setHorizontalHeaderLabels({tr("Setting"), tr("This run"), tr("Compared run")});
    settings_->setToolTip(tr("The settings in which the two runs differ, and only those"));
    if (!showing_)
        summary_->setText(tr("No comparison: File › Compare with… opens a second run beside this one."));
}

void ComparisonPanel::clear()
{
    showing_ = false;
    retranslate();
    settings_->setRowCount(0);
}

void ComparisonPanel::showDiff(const RunDiff *diff, const QString &thisName, const QString &otherName)
{
    showing_ = true;
    settings_->setRowCount(0);
    if (!diff) {
        summary_->setText(tr("%1 is drawn over this run's plots; the comparison of their steps and settings "
                             "waits for this run's file.")
                              .arg(otherName.toHtmlEscaped()));
        return;
    }
    QStringList lines;
    lines << tr("<b>%1</b> (%2 steps) against <b>%3</b> (%4 steps), %5 steps compared bit for bit.")
                 .arg(thisName.toHtmlEscaped())
                 .arg(diff->stepsA)
                 .arg(otherName.toHtmlEscaped())
                 .arg(diff->stepsB)
                 .arg(diff->stepsCompared);
    lines << partingText(diff->parting);
    lines << failureText(thisName, diff->firstFailedA, diff->parting.step);
    lines << failureText(otherName, diff->firstFailedB, diff->parting.step);
    if (!diff->layersOnlyInA.empty() || !diff->layersOnlyInB.empty())
        lines << tr("Layers only in one run: %1 and %2.")
                     .arg(diff->layersOnlyInA.size())
                     .arg(diff->layersOnlyInB.size());
    if (diff->settings.empty())
        lines << tr("The same settings.");
    summary_->setText(lines.join(QLatin1String("<br>")));
    for (const SettingDifference &s : diff->settings) {
        const int row = settings_->rowCount();
        settings_->insertRow(row);
        settings_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(s.key)));
        settings_->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(s.a)));
        settings_->setItem(row, 2, new QTableWidgetItem(QString::fromStdString(s.b)));
    }
    settings_->resizeColumnsToContents();
}

QString ComparisonPanel::summaryText() const { return summary_->text(); }

}  // namespace nanscope
