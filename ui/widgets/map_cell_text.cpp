#include "widgets/map_cell_text.h"

#include "nanscope/precision.h"

#include <QCoreApplication>
#include <QObject>

#include <cmath>

namespace nanscope {

// The translation context of a map cell's texts (the map's tooltip and the status line).
struct MapCellText {
    Q_DECLARE_TR_FUNCTIONS(MapCellText)
};


namespace {

QString number(double v) { return QString::number(v, 'g', 3); }

// Why a run file kept a step's layers in full (docs/run-file.md, "Layer detail"); empty where it
// keeps every step's.
QString keptBecause(LayerDetail detail)
{
    switch (detail) {
    case LayerDetail::First: return MapCellText::tr("one of the run's first steps");
    case LayerDetail::NonFinite: return MapCellText::tr("it holds NaN or Inf");
    case LayerDetail::Warning: return MapCellText::tr("an overflow forecast");
    case LayerDetail::LeadUp: return MapCellText::tr("it leads up to a non-finite step, a warning or a control change");
    case LayerDetail::Control: return MapCellText::tr("it follows a control change");
    case LayerDetail::Capsule: return MapCellText::tr("a capsule of it was saved");
    case LayerDetail::Sample: return MapCellText::tr("a regular sample of the healthy steps");
    case LayerDetail::Every:
    case LayerDetail::None: break;
    }
    return {};
}

}  // namespace

QString mapKindText(MapKind kind)
{
    switch (kind) {
    case MapKind::Forward: return MapCellText::tr("forward");
    case MapKind::Grad: return MapCellText::tr("backward");
    case MapKind::Params: return MapCellText::tr("parameters");
    case MapKind::ParamGrads: return MapCellText::tr("parameter gradients");
    }
    return {};
}

QString describeMapCell(const NanMapData &data, const std::vector<Layer> &layers, const MapView &view,
                        const MapRow &row, int column)
{
    const auto name = [&layers](int id) {
        const std::string &p = layers[std::size_t(id)].path;
        return p.empty() ? MapCellText::tr("(model)") : QString::fromStdString(p);
    };
    const int worst = worstMember(data, view, row, column, nullptr);
    const int layer = worst >= 0 ? worst : row.layer;
    const Layer &l = layers[std::size_t(layer)];
    QString head = MapCellText::tr("%1 (%2)").arg(name(layer), QString::fromStdString(l.type));
    if (row.collapsed)
        head = MapCellText::tr("%1, closed: %2 modules; the worst is %3")
                   .arg(name(row.layer))
                   .arg(row.lastMember - row.layer + 1)
                   .arg(head);
    const MapCell &cell =
        data.cell(measureUsesKind(view.measure) ? view.kind : MapKind::ParamGrads, column, layer);
    const QString steps =
        data.firstStep(column) == data.lastStep(column)
            ? MapCellText::tr("step %1").arg(data.firstStep(column))
            : MapCellText::tr("steps %1–%2 (worst: step %3)").arg(data.firstStep(column)).arg(data.lastStep(column)).arg(cell.step);
    const QString what = mapKindText(view.kind);
    const QString precision = QString::fromLatin1(precisionName(view.precision));
    const QString nonFinite = cell.nonFinite() > 0 ? MapCellText::tr("; %1 NaN/Inf").arg(cell.nonFinite()) : QString();
    QString body;
    if (view.measure == MapMeasure::UpdateRatio) {
        const double r = data.updateRatio(column, layer);
        body = std::isnan(r) ? MapCellText::tr("no update measured (skipped, or no parameters)")
                             : MapCellText::tr("update |Δw| / |w| = %1").arg(number(r));
    } else if (!cell.present) {
        body = MapCellText::tr("%1: nothing observed").arg(view.measure == MapMeasure::GradNorm ? MapCellText::tr("parameter gradients") : what);
    } else {
        switch (view.measure) {
        case MapMeasure::NonFinite:
            body = MapCellText::tr("%1: %2 NaN, %3 +Inf, %4 -Inf of %5 values")
                       .arg(what)
                       .arg(cell.nan)
                       .arg(cell.posInf)
                       .arg(cell.negInf)
                       .arg(cell.numel);
            break;
        case MapMeasure::Magnitude:
            body = MapCellText::tr("%1: largest finite |value| %2 (%3's largest: %4)%5")
                       .arg(what, number(cell.absMax), precision, number(largestFinite(view.precision)), nonFinite);
            break;
        case MapMeasure::Headroom:
            body = MapCellText::tr("%1: largest finite |value| is %2 of %3's largest%4")
                       .arg(what, number(cell.absMax / largestFinite(view.precision)), precision, nonFinite);
            break;
        case MapMeasure::GradNorm: body = MapCellText::tr("parameter-gradient norm %1%2").arg(number(cell.norm), nonFinite); break;
        case MapMeasure::UpdateRatio: break;
        case MapMeasure::Difference: {
            const auto values = [&](const MapCell &c) {
                return MapCellText::tr("norm %1, largest |value| %2, %3 NaN/Inf").arg(number(c.norm), number(c.absMax)).arg(c.nonFinite());
            };
            const MapCell *other = comparedCell(data, view, column, layer);
            body = other && other->present
                       ? MapCellText::tr("%1\nthis run: %2\ncompared run: %3\nrelative difference %4")
                             .arg(what, values(cell), values(*other), number(relativeDifference(cell, *other)))
                       : MapCellText::tr("%1: the compared run has nothing here").arg(what);
            break;
        }
        }
    }
    // A thinned run file (docs/run-file.md, "Layer detail") keeps some healthy steps by their chunk only.
    const int span = data.lastStep(column) - data.firstStep(column) + 1;
    const int withoutDetail = data.stepsWithoutDetail(column);
    if (withoutDetail > 0)
        body += QLatin1Char('\n') +
                (withoutDetail == span
                     ? MapCellText::tr("The run file kept no layer detail of these steps (all finite): their "
                                       "64-step chunk's largest finite values stand in for them.")
                     : MapCellText::tr("%n of these steps kept no layer detail in the run file (all finite): "
                                       "their 64-step chunk's largest finite values stand in for them.",
                                       nullptr, withoutDetail));
    if (data.stepsFromChunks(column) > 0)
        body += QLatin1Char('\n') + MapCellText::tr("From the run file's chunks of these steps (each layer's worst over "
                                                    "them): zoom in to read single steps.");
    else if (span == 1 && !keptBecause(data.layerDetail(column)).isEmpty())
        body += QLatin1Char('\n') + MapCellText::tr("The run file keeps this step's layers in full: %1.")
                                        .arg(keptBecause(data.layerDetail(column)));
    return MapCellText::tr("%1, %2\n%3").arg(head, steps, body);
}

}  // namespace nanscope
