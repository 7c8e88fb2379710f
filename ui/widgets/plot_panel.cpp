#include "widgets/plot_panel.h"

#include "run/run_store.h"
#include "run/stretch_read.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QPdfWriter>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace nanscope {

namespace {
const char *kMarkTag = "controlMark";
}

PlotPanel::PlotPanel(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    logScale_ = new QCheckBox;
    fit_ = new QPushButton;
    bar->addWidget(logScale_);
    bar->addWidget(fit_);
    bar->addStretch();
    layout->addLayout(bar);

    auto *split = new QSplitter(Qt::Vertical);
    for (int i = 0; i < kPlots; ++i) {
        plots_[i] = new QCustomPlot;
        plots_[i]->setMinimumHeight(90);
        setUpStepPlot(plots_[i]);
        split->addWidget(plots_[i]);
        cursors_[i] = new QCPItemStraightLine(plots_[i]);
        cursors_[i]->setPen(QPen(QColor(90, 90, 90), 1, Qt::DashLine));
        cursors_[i]->setVisible(false);
        connect(plots_[i]->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
                [this, i] { syncStepAxes(plots_[i]); });
        // As many value ticks as the plot's height has room for: a short plot with five labels
        // overprints them.
        connect(plots_[i], &QCustomPlot::beforeReplot, this, [plot = plots_[i]] {
            plot->yAxis->ticker()->setTickCount(std::clamp(plot->axisRect()->height() / 30, 2, 5));
        });
        connect(plots_[i], &QCustomPlot::mouseWheel, this, [this] { followRun_ = false; });
        connect(plots_[i], &QCustomPlot::mousePress, this,
                [this](QMouseEvent *e) { pressPos_ = e->position().toPoint(); });
        connect(plots_[i], &QCustomPlot::mouseMove, this, [this](QMouseEvent *e) {
            if ((e->buttons() & Qt::LeftButton) && (e->position().toPoint() - pressPos_).manhattanLength() > 3)
                followRun_ = false;
        });
        connect(plots_[i], &QCustomPlot::mouseDoubleClick, this, &PlotPanel::fitRun);
        connect(plots_[i], &QCustomPlot::mouseRelease, this, [this, i](QMouseEvent *e) {
            // A click without a drag selects that step everywhere; a drag pans.
            if (e->button() == Qt::LeftButton && (e->position().toPoint() - pressPos_).manhattanLength() <= 3)
                Q_EMIT stepClicked(int(std::lround(plots_[i]->xAxis->pixelToCoord(e->position().x()))));
        });
    }
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 1);
    split->setStretchFactor(3, 1);
    layout->addWidget(split, 1);

    // Names and axis labels come from retranslate(), below.
    loss_ = addSeries(lossPlot(), QColor(31, 119, 180));
    grad_ = addSeries(gradPlot(), QColor(31, 119, 180));
    clipped_ = addSeries(gradPlot(), QColor(255, 127, 14), 0.85);
    lr_ = addSeries(lrPlot(), QColor(44, 160, 44));
    lrPlot()->legend->setVisible(false);
    scale_ = addSeries(lossScalePlot(), QColor(148, 103, 189));
    skipped_ = lossScalePlot()->addGraph();
    skipped_->setLineStyle(QCPGraph::lsNone);
    skipped_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QColor(255, 127, 14), 8));
    // Scales move by powers of two: a log axis shows each halving as one equal step.
    lossScalePlot()->yAxis->setScaleType(QCPAxis::stLogarithmic);
    lossScalePlot()->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
    lossScalePlot()->setVisible(false);
    lossPlot()->legend->setVisible(false);  // one series: the axis names it

    connect(logScale_, &QCheckBox::toggled, this, &PlotPanel::setLogScale);
    connect(logScale_, &QCheckBox::clicked, this, [this] { userChoseScale_ = true; });  // not setChecked()
    connect(fit_, &QPushButton::clicked, this, &PlotPanel::fitRun);
    retranslate();
}

void PlotPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
        replotAll();
    }
    QWidget::changeEvent(event);
}

void PlotPanel::retranslate()
{
    logScale_->setText(tr("&Log scale"));
    logScale_->setToolTip(tr("Logarithmic value axes (non-positive values are not drawn; NaN/Inf markers stay)"));
    fit_->setText(tr("&Fit"));
    fit_->setToolTip(tr("Show the whole run again and follow new steps (or double-click a plot)"));
    const QString labels[kPlots] = {tr("loss"), tr("grad norm"), tr("lr"), tr("loss scale")};
    for (int i = 0; i < kPlots; ++i) {
        plots_[i]->xAxis->setLabel(tr("step"));
        plots_[i]->yAxis->setLabel(labels[i]);
    }
    // While a run is compared its series carry the runs' names (setComparison).
    if (!compared_) {
        nameSeries(loss_, tr("loss"));
        nameSeries(grad_, tr("before clipping"));
        nameSeries(lr_, tr("lr"));
    }
    nameSeries(clipped_, tr("after clipping"));
    nameSeries(scale_, tr("loss scale"));
    skipped_->setName(tr("update skipped"));
}

void PlotPanel::clear()
{
    for (const SeriesGraphs &g : {loss_, grad_, clipped_, lr_, scale_}) {
        g.values->data()->clear();
        g.markers->data()->clear();
    }
    skipped_->data()->clear();
    lossScalePlot()->setVisible(false);
    for (QCustomPlot *p : plots_)
        for (int i = p->itemCount() - 1; i >= 0; --i)
            if (p->item(i)->property(kMarkTag).toBool())
                p->removeItem(i);
    markCount_ = 0;
    followRun_ = true;
    if (!userChoseScale_)
        setLogScale(false);
    setCursorStep(-1);
    firstStep_ = lastStep_ = 0;
    replotAll();
}

void PlotPanel::refresh(const RunStore &store)
{
    if (!userChoseScale_ && !logScale_->isChecked() &&
        std::max(decadesSpanned(store.series(Series::Loss)), decadesSpanned(store.series(Series::GradNorm))) >
            kAutoLogDecades)
        setLogScale(true);
    // A zoomed stretch's buckets replace the store's where it has them (the store's alone, uncopied,
    // otherwise: this runs at every refresh).
    const auto show = [&](const SeriesGraphs &graphs, Series s) {
        if (stretch_)
            showSeries(graphs, withStretch(store.series(s).buckets(), &stretch_->series(s)));
        else
            showSeries(graphs, store.series(s));
    };
    show(loss_, Series::Loss);
    show(grad_, Series::GradNorm);
    show(clipped_, Series::GradNormClipped);
    show(lr_, Series::LearningRate);
    if (store.usesLossScaling()) {
        lossScalePlot()->setVisible(true);
        show(scale_, Series::LossScale);
        std::vector<SeriesBucket> spliced;
        const std::vector<SeriesBucket> *skipped = &store.skippedSteps().buckets();
        if (stretch_)
            skipped = &(spliced = withStretch(*skipped, &stretch_->skippedSteps()));
        QVector<double> keys, values;
        for (const SeriesBucket &b : *skipped) {
            keys.push_back(b.firstStep);
            values.push_back(b.max);
        }
        skipped_->setData(keys, values, true);
    }
    showControlMarks(store);
    const auto &buckets = store.series(Series::Loss).buckets();
    if (!buckets.empty()) {
        firstStep_ = buckets.front().firstStep;
        lastStep_ = buckets.back().lastStep;
    }
    showComparison();
    if (followRun_)
        fitSteps();
    for (QCustomPlot *p : plots_)
        fitValueAxis(p);
    replotAll();
}

void PlotPanel::setComparison(const RunStore *other, const QString &thisName, const QString &otherName)
{
    compared_ = other;
    const std::pair<SeriesGraphs *, QCustomPlot *> compared[] = {
        {&comparedLoss_, lossPlot()}, {&comparedGrad_, gradPlot()}, {&comparedLr_, lrPlot()}};
    if (!other) {
        for (const auto &[graphs, plot] : compared)
            if (graphs->values) {
                plot->removeGraph(graphs->values);
                plot->removeGraph(graphs->markers);
                *graphs = {};
            }
        compared_ = nullptr;
        retranslate();  // the series' own names again
        lossPlot()->legend->setVisible(false);
        lrPlot()->legend->setVisible(false);
        replotAll();
        return;
    }
    // The second run dashed, in one colour of its own, its NaN/Inf markers lower down.
    const QColor colour(214, 39, 40);
    for (const auto &[graphs, plot] : compared) {
        if (!graphs->values)
            *graphs = addSeries(plot, colour, 0.75);
        nameSeries(*graphs, otherName);
        graphs->values->setPen(QPen(colour, 1.5, Qt::DashLine));
        plot->legend->setVisible(true);
    }
    nameSeries(loss_, thisName);
    nameSeries(grad_, tr("%1, before clipping").arg(thisName));
    nameSeries(lr_, thisName);
    showComparison();
    for (QCustomPlot *p : plots_)
        fitValueAxis(p);
    if (followRun_)
        fitSteps();
    replotAll();
}

void PlotPanel::showComparison()
{
    if (!compared_)
        return;
    showSeries(comparedLoss_, compared_->series(Series::Loss));
    showSeries(comparedGrad_, compared_->series(Series::GradNorm));
    showSeries(comparedLr_, compared_->series(Series::LearningRate));
    const auto &buckets = compared_->series(Series::Loss).buckets();
    if (!buckets.empty()) {  // the step axis spans both runs
        firstStep_ = std::min(firstStep_, buckets.front().firstStep);
        lastStep_ = std::max(lastStep_, buckets.back().lastStep);
    }
}

void PlotPanel::fitSteps()
{
    syncing_ = true;
    for (QCustomPlot *p : plots_)
        p->xAxis->setRange(firstStep_, std::max(lastStep_, firstStep_ + 1));
    syncing_ = false;
    replotAll();
    Q_EMIT stepRangeChanged();
}

void PlotPanel::syncStepAxes(const QCustomPlot *source)
{
    if (syncing_)
        return;
    syncing_ = true;
    for (QCustomPlot *p : plots_)
        if (p != source) {
            p->xAxis->setRange(source->xAxis->range());
            p->replot(QCustomPlot::rpQueuedReplot);
        }
    syncing_ = false;
    Q_EMIT stepRangeChanged();
}

void PlotPanel::fitRun()
{
    followRun_ = true;
    fitSteps();
}

void PlotPanel::setStretch(const RunStore *stretch) { stretch_ = stretch; }

std::pair<int, int> PlotPanel::shownSteps() const
{
    const QCPRange range = lossPlot()->xAxis->range();
    return {int(std::ceil(range.lower)), int(std::floor(range.upper))};
}

void PlotPanel::showSteps(int first, int last)
{
    followRun_ = false;
    lossPlot()->xAxis->setRange(first, std::max(last, first + 1));  // the others follow
    replotAll();
}

// Marks are added, never rebuilt: the store only appends (and drops the oldest past its cap).
void PlotPanel::showControlMarks(const RunStore &store)
{
    const auto &marks = store.controlMarks();
    if (int(marks.size()) == markCount_)
        return;
    for (QCustomPlot *p : plots_)
        for (int i = p->itemCount() - 1; i >= 0; --i)
            if (p->item(i)->property(kMarkTag).toBool())
                p->removeItem(i);
    for (const ControlMark &m : marks) {
        for (QCustomPlot *p : plots_) {
            auto *line = new QCPItemStraightLine(p);
            line->setProperty(kMarkTag, true);
            line->setPen(QPen(QColor(120, 60, 170), 1, Qt::DotLine));
            line->point1->setCoords(m.step, 0);
            line->point2->setCoords(m.step, 1);
            if (p != lossPlot())
                continue;
            auto *label = new QCPItemText(p);
            label->setProperty(kMarkTag, true);
            label->setText(QString::fromStdString(m.text));
            label->setColor(QColor(120, 60, 170));
            label->position->setTypeX(QCPItemPosition::ptPlotCoords);
            label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            label->position->setCoords(m.step, 0.02);
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
            label->setPadding(QMargins(3, 0, 0, 0));
        }
    }
    markCount_ = int(marks.size());
}

void PlotPanel::setLogScale(bool on)
{
    if (logScale_->isChecked() != on)
        logScale_->setChecked(on);
    for (QCustomPlot *p : plots_) {
        if (p == lossScalePlot())
            continue;  // always logarithmic
        p->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        p->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(on ? new QCPAxisTickerLog : new QCPAxisTicker));
        fitValueAxis(p);
    }
    replotAll();
}

void PlotPanel::setCursorStep(int step)
{
    cursorStep_ = step;
    for (QCPItemStraightLine *c : cursors_) {
        c->setVisible(step >= 0);
        c->point1->setCoords(step, 0);
        c->point2->setCoords(step, 1);
    }
    replotAll();
}

void PlotPanel::replotAll()
{
    for (QCustomPlot *p : plots_)
        p->replot(QCustomPlot::rpQueuedReplot);
}

int PlotPanel::skippedMarkerCount() const { return skipped_->dataCount(); }

bool PlotPanel::exportPng(const QString &path, QString *error)
{
    const QPixmap image = grab();
    if (image.save(path, "PNG"))
        return true;
    if (error)
        *error = tr("cannot write %1").arg(path);
    return false;
}

// Vector output: each plot draws itself through QCustomPlot's own painter, stacked on one page.
bool PlotPanel::exportPdf(const QString &path, QString *error)
{
    int width = 0, height = 0;
    for (QCustomPlot *p : plots_) {
        if (p->isHidden())
            continue;
        width = std::max(width, p->width());
        height += p->height();
    }
    QPdfWriter writer(path);
    writer.setCreator(QStringLiteral("NaNScope"));
    writer.setResolution(96);
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    writer.setPageSize(QPageSize(QSizeF(width * 72.0 / 96.0, height * 72.0 / 96.0), QPageSize::Point));
    QCPPainter painter;
    if (!painter.begin(&writer)) {
        if (error)
            *error = tr("cannot write %1").arg(path);
        return false;
    }
    painter.setMode(QCPPainter::pmVectorized);
    painter.setMode(QCPPainter::pmNoCaching);
    int y = 0;
    for (QCustomPlot *p : plots_) {
        if (p->isHidden())
            continue;
        painter.save();
        painter.translate(0, y);
        p->toPainter(&painter, p->width(), p->height());
        painter.restore();
        y += p->height();
    }
    painter.end();
    return true;
}

}  // namespace nanscope
