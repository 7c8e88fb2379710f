#include "widgets/map_cell_text.h"

#include "nanscope/precision.h"

#include <QObject>

#include <cmath>

namespace nanscope {

namespace {

QString number(double v) { return QString::number(v, 'g', 3); }

}  // namespace

QString describeMapCell(const NanMapData &data, const std::vector<Layer> &layers, const MapView &view,
                        const MapRow &row, int column)
{
    const auto tr = [](const char *text) { return QObject::tr(text); };
    const auto name = [&layers, &tr](int id) {
        const std::string &p = layers[std::size_t(id)].path;
        return p.empty() ? tr("(model)") : QString::fromStdString(p);
    };
    const int worst = worstMember(data, view, row, column, nullptr);
    const int layer = worst >= 0 ? worst : row.layer;
    const Layer &l = layers[std::size_t(layer)];
    QString head = tr("%1 (%2)").arg(name(layer), QString::fromStdString(l.type));
    if (row.collapsed)
        head = tr("%1, closed: %2 modules; the worst is %3")
                   .arg(name(row.layer))
                   .arg(row.lastMember - row.layer + 1)
                   .arg(head);
    const MapCell &cell =
        data.cell(measureUsesKind(view.measure) ? view.kind : MapKind::ParamGrads, column, layer);
    const QString steps =
        data.firstStep(column) == data.lastStep(column)
            ? tr("step %1").arg(data.firstStep(column))
            : tr("steps %1–%2 (worst: step %3)").arg(data.firstStep(column)).arg(data.lastStep(column)).arg(cell.step);
    const QString what = tr(mapKindName(view.kind));
    const QString precision = QString::fromLatin1(precisionName(view.precision));
    const QString nonFinite = cell.nonFinite() > 0 ? tr("; %1 NaN/Inf").arg(cell.nonFinite()) : QString();
    QString body;
    if (view.measure == MapMeasure::UpdateRatio) {
        const double r = data.updateRatio(column, layer);
        body = std::isnan(r) ? tr("no update measured (skipped, or no parameters)")
                             : tr("update |Δw| / |w| = %1").arg(number(r));
    } else if (!cell.present) {
        body = tr("%1: nothing observed").arg(view.measure == MapMeasure::GradNorm ? tr("parameter gradients") : what);
    } else {
        switch (view.measure) {
        case MapMeasure::NonFinite:
            body = tr("%1: %2 NaN, %3 +Inf, %4 -Inf of %5 values")
                       .arg(what)
                       .arg(cell.nan)
                       .arg(cell.posInf)
                       .arg(cell.negInf)
                       .arg(cell.numel);
            break;
        case MapMeasure::Magnitude:
            body = tr("%1: largest finite |value| %2 (%3's largest: %4)%5")
                       .arg(what, number(cell.absMax), precision, number(largestFinite(view.precision)), nonFinite);
            break;
        case MapMeasure::Headroom:
            body = tr("%1: largest finite |value| is %2 of %3's largest%4")
                       .arg(what, number(cell.absMax / largestFinite(view.precision)), precision, nonFinite);
            break;
        case MapMeasure::GradNorm: body = tr("parameter-gradient norm %1%2").arg(number(cell.norm), nonFinite); break;
        case MapMeasure::UpdateRatio: break;
        case MapMeasure::Difference: {
            const auto values = [&](const MapCell &c) {
                return tr("norm %1, largest |value| %2, %3 NaN/Inf").arg(number(c.norm), number(c.absMax)).arg(c.nonFinite());
            };
            const MapCell *other = comparedCell(data, view, column, layer);
            body = other && other->present
                       ? tr("%1\nthis run: %2\ncompared run: %3\nrelative difference %4")
                             .arg(what, values(cell), values(*other), number(relativeDifference(cell, *other)))
                       : tr("%1: the compared run has nothing here").arg(what);
            break;
        }
        }
    }
    return tr("%1, %2\n%3").arg(head, steps, body);
}

}  // namespace nanscope
