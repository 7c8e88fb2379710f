// NanMapView's texts in the current language: the bar's labels and choices, the step axis.
#include "widgets/nan_map_view.h"

#include "widgets/map_cell_text.h"

#include <QComboBox>
#include <QEvent>
#include <QLabel>

#include <qcustomplot.h>

namespace nanscope {

void NanMapView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslate();
        replot();
    }
    QWidget::changeEvent(event);
}

QString NanMapView::measureText(MapMeasure measure) { return tr(mapMeasureName(measure)); }

void NanMapView::retranslate()
{
    kindLabel_->setText(tr("Map of"));
    measureLabel_->setText(tr("as"));
    for (int i = 0; i < kindBox_->count(); ++i)
        kindBox_->setItemText(i, mapKindText(MapKind(kindBox_->itemData(i).toInt())));
    for (int i = 0; i < measureBox_->count(); ++i)
        measureBox_->setItemText(i, measureText(MapMeasure(measureBox_->itemData(i).toInt())));
    kindBox_->setToolTip(tr("Which tensors the map shows: layer outputs, the gradients flowing into them, "
                            "the layers' parameters, or the parameters' gradients"));
    measureBox_->setToolTip(
        tr("What a cell shows: the share of NaN/Inf values; the largest finite magnitude (log scale; dark red: "
           "overflowed); the headroom, how near the largest value of the run's precision (1: overflow); the update "
           "ratio |Δw|/|w| of each step, usually 1e-4 to 1e-2; the L2 norm of each layer's parameter gradients; or, "
           "while a run is compared, the relative difference from it"));
    plot_->xAxis->setLabel(tr("step"));
}

}  // namespace nanscope
