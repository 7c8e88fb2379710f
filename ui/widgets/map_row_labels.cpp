#include "widgets/map_row_labels.h"

#include <QFontMetrics>

#include <algorithm>

namespace nanscope {

QString rowLabel(const std::vector<Layer> &layers, const MapRow &row, const QFontMetrics &metrics, int width)
{
    const Layer &layer = layers[std::size_t(row.layer)];
    std::string name = layer.path;
    if (layer.parent >= 0 && std::size_t(layer.parent) < layers.size()) {
        const std::string &parent = layers[std::size_t(layer.parent)].path;
        if (!parent.empty() && name.size() > parent.size() + 1 && name.compare(0, parent.size() + 1, parent + ".") == 0)
            name = name.substr(parent.size() + 1);
    }
    const QString shown = name.empty() ? QStringLiteral("(model)") : QString::fromStdString(name);
    const QString marker = row.collapsed ? QStringLiteral("▸ ") : row.hasChildren ? QStringLiteral("▾ ") : QString();
    const QString indent(2 * row.depth, QLatin1Char(' '));
    const int room = width - metrics.horizontalAdvance(indent + marker);
    return indent + marker + metrics.elidedText(shown, Qt::ElideMiddle, std::max(room, metrics.averageCharWidth() * 3));
}

int minimumRowHeight(const QFontMetrics &metrics) { return metrics.height() + 2; }

}  // namespace nanscope
