#include "models/layer_tree_model.h"

#include "run/nan_map_data.h"

#include <QPainter>
#include <QPixmap>
#include <QSortFilterProxyModel>
#include <QStringList>

#include <algorithm>
#include <climits>
#include <cmath>
#include <tuple>

namespace nanscope {

QString layerStatusName(LayerStatus status)
{
    switch (status) {
    case LayerStatus::Clean: return LayerTreeModel::tr("clean");
    case LayerStatus::PassedOn: return LayerTreeModel::tr("passed on");
    case LayerStatus::BadWeights: return LayerTreeModel::tr("weights non-finite");
    case LayerStatus::BornHere: return LayerTreeModel::tr("born here");
    }
    return {};
}

QColor layerStatusColor(LayerStatus status)
{
    switch (status) {
    case LayerStatus::Clean: return QColor(0x2e, 0x7d, 0x32);       // green
    case LayerStatus::PassedOn: return QColor(0xef, 0x6c, 0x00);    // orange
    case LayerStatus::BadWeights: return QColor(0x6a, 0x1b, 0x9a);  // purple
    case LayerStatus::BornHere: return QColor(0xc6, 0x28, 0x28);    // red
    }
    return {};
}

QString healthSummary(const TensorHealth &h)
{
    if (!h.present)
        return QString(QChar(0x2014));
    if (h.hasNonFinite()) {
        QStringList parts;
        if (h.nan > 0)
            parts << QStringLiteral("%1 NaN").arg(h.nan);
        if (h.posInf > 0)
            parts << QStringLiteral("%1 +Inf").arg(h.posInf);
        if (h.negInf > 0)
            parts << QStringLiteral("%1 -Inf").arg(h.negInf);
        return parts.join(QStringLiteral(", ")) + QStringLiteral(" / %1").arg(h.numel);
    }
    if (std::isnan(h.absMax))  // an empty tensor: finite, but nothing to measure
        return LayerTreeModel::tr("finite");
    return LayerTreeModel::tr("finite, |max| %1").arg(h.absMax, 0, 'g', 3);
}

namespace {

// What the row shows of a health value; other fields (min, L2) may change without a repaint.
bool sameShown(const TensorHealth &a, const TensorHealth &b)
{
    const bool sameMax = a.absMax == b.absMax || (std::isnan(a.absMax) && std::isnan(b.absMax));
    return a.present == b.present && a.numel == b.numel && a.nan == b.nan && a.posInf == b.posInf &&
           a.negInf == b.negInf && sameMax;
}

QIcon statusIcon(LayerStatus status)
{
    QPixmap pixmap(16, 16);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    const QColor color = layerStatusColor(status);
    p.setPen(QPen(color.darker(140), 1.0));
    p.setBrush(color);
    p.drawEllipse(QRectF(2.5, 2.5, 11.0, 11.0));
    return QIcon(pixmap);
}

double sortFraction(const TensorHealth &h)
{
    return h.present ? h.nonFiniteFraction() : -1.0;  // "not observed" sorts below "finite"
}

}  // namespace

LayerStatus LayerTreeModel::Node::status() const
{
    if (bornStep >= 0)
        return LayerStatus::BornHere;
    if (badWeightsStep >= 0)
        return LayerStatus::BadWeights;
    return sawNonFinite ? LayerStatus::PassedOn : LayerStatus::Clean;
}

QString LayerTreeModel::Node::statusText() const
{
    QString text;
    switch (status()) {
    case LayerStatus::Clean: return layerStatusName(LayerStatus::Clean);
    case LayerStatus::PassedOn: text = LayerTreeModel::tr("passed on from step %1").arg(firstNonFinite); break;
    case LayerStatus::BadWeights:
        text = LayerTreeModel::tr("weights non-finite from step %1").arg(badWeightsStep);
        break;
    case LayerStatus::BornHere: text = LayerTreeModel::tr("born here at step %1").arg(bornStep); break;
    }
    if (recoveredStep >= 0)
        text += LayerTreeModel::tr(", recovered at step %1").arg(recoveredStep);
    return text;
}

LayerTreeModel::LayerTreeModel(QObject *parent)
    : QAbstractItemModel(parent), icons_{statusIcon(LayerStatus::Clean), statusIcon(LayerStatus::PassedOn),
                                         statusIcon(LayerStatus::BadWeights), statusIcon(LayerStatus::BornHere)}
{
}

void LayerTreeModel::setLayers(const std::vector<Layer> &layers)
{
    beginResetModel();
    nodes_.clear();
    top_.clear();
    nodeOfId_.clear();
    nodes_.reserve(layers.size());
    for (const Layer &layer : layers) {
        const int self = int(nodes_.size());
        Node node;
        node.layer = layer;
        // named_modules() lists a parent before its children; a parent that is not listed
        // earlier (unknown, or a cycle) puts the layer at the top level instead of hiding it.
        const auto it = nodeOfId_.find(layer.parent);
        node.parent = it != nodeOfId_.end() ? it->second : -1;
        auto &siblings = node.parent < 0 ? top_ : nodes_[node.parent].children;
        node.row = int(siblings.size());
        siblings.push_back(self);
        nodes_.push_back(std::move(node));
        nodeOfId_.emplace(layer.id, self);
    }
    endResetModel();
}

bool LayerTreeModel::apply(Node &node, const StepRecord &record, const LayerHealth *health) const
{
    bool changed = false;
    Marks marks;
    if (health) {  // a record without this layer's health leaves the last one shown
        changed = !sameShown(node.forward, health->forward) || !sameShown(node.grad, health->grad);
        node.forward = health->forward;
        node.grad = health->grad;
        marks.observed = true;
        marks.bad = health->nonFinite();
        marks.weights = health->params.hasNonFinite();
    }
    const Origin &o = record.origin;
    marks.born = record.bornInLayer() == node.layer.id;
    marks.weights = marks.weights || (record.failed() && o.layer == node.layer.id &&
                                      (o.phase == Phase::Parameter || o.phase == Phase::Update));
    return mark(node, record.step, marks) || changed;
}

bool LayerTreeModel::mark(Node &node, int step, Marks m)
{
    const auto shown = [](const Node &n) {
        return std::make_tuple(n.firstNonFinite, n.sawNonFinite, n.bornStep, n.badWeightsStep, n.recoveredStep);
    };
    const auto before = shown(node);
    const bool any = m.bad || m.born || m.weights;
    if (any && (node.firstNonFinite < 0 || step < node.firstNonFinite))
        node.firstNonFinite = step;
    node.sawNonFinite = node.sawNonFinite || m.bad;
    if (m.born && (node.bornStep < 0 || step < node.bornStep))
        node.bornStep = step;
    if (m.weights && (node.badWeightsStep < 0 || step < node.badWeightsStep))
        node.badWeightsStep = step;
    if (any && step >= node.lastBadStep) {
        node.lastBadStep = step;
        node.recoveredStep = -1;
    } else if (!any && m.observed && node.lastBadStep >= 0 && step > node.lastBadStep && node.recoveredStep < 0) {
        node.recoveredStep = step;  // history: the first clean step since it was last non-finite
    }
    return shown(node) != before;
}

void LayerTreeModel::addChunks(const QVector<StepChunkPtr> &chunks)
{
    if (nodes_.empty())
        return;
    std::vector<bool> changed(nodes_.size(), false);
    for (const StepChunkPtr &chunk : chunks) {
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            const int id = nodes_[i].layer.id;
            if (id < 0 || std::size_t(id) >= chunk->layers.size())
                continue;
            const StepChunk::LayerPart &part = chunk->layers[std::size_t(id)];
            // A layer bad at one step and born at another: both marks, the earlier step first. A
            // chunk keeps its worst parameter step, not its first.
            Node &n = nodes_[i];
            const MapCell &params = part.cells[std::size_t(MapKind::Params)];  // LayerHealth order
            std::vector<std::pair<int, Marks>> marks;
            if (part.firstNonFinite >= 0)
                marks.push_back({part.firstNonFinite, Marks{true, false, false}});
            if (part.firstProduced >= 0)
                marks.push_back({part.firstProduced, Marks{false, true, false}});
            if (params.present && params.nan + params.posInf + params.negInf > 0)
                marks.push_back({params.step, Marks{false, false, true}});
            std::sort(marks.begin(), marks.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
            for (const auto &[step, m] : marks)
                changed[i] = mark(n, step, m) || changed[i];
        }
    }
    emitChanged(changed);
}

void LayerTreeModel::addRecords(const QVector<StepRecordPtr> &records)
{
    if (nodes_.empty())
        return;
    std::vector<bool> changed(nodes_.size(), false);
    for (const StepRecordPtr &record : records) {
        if (!record)
            continue;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            const int id = nodes_[i].layer.id;
            // StepRecord::layers is indexed by Layer::id.
            const LayerHealth *health =
                id >= 0 && std::size_t(id) < record->layers.size() ? &record->layers[id] : nullptr;
            if (apply(nodes_[i], *record, health))
                changed[i] = true;
        }
    }
    emitChanged(changed);
}

// One dataChanged per run of adjacent changed siblings: few signals, and only changed rows.
void LayerTreeModel::emitChanged(const std::vector<bool> &changed)
{
    for (int parent = -1; parent < int(nodes_.size()); ++parent) {
        const std::vector<int> &rows = childrenOf(parent);
        for (int first = 0; first < int(rows.size());) {
            if (!changed[rows[first]]) {
                ++first;
                continue;
            }
            int last = first;
            while (last + 1 < int(rows.size()) && changed[rows[last + 1]])
                ++last;
            const quintptr id = quintptr(parent + 1);
            Q_EMIT dataChanged(createIndex(first, 0, id), createIndex(last, ColumnCount - 1, id));
            first = last + 1;
        }
    }
}

QModelIndex LayerTreeModel::indexForLayer(int id, int column) const
{
    const auto it = nodeOfId_.find(id);
    if (it == nodeOfId_.end() || column < 0 || column >= ColumnCount)
        return {};
    const Node &node = nodes_[it->second];
    return createIndex(node.row, column, quintptr(node.parent + 1));
}

int LayerTreeModel::layerAt(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this)
        return -1;
    return nodes_[nodeOf(index)].layer.id;
}

// internalId is the parent's node index + 1 (0: top level), as in hotspot's tree models.
int LayerTreeModel::nodeOf(const QModelIndex &index) const
{
    return childrenOf(int(index.internalId()) - 1)[index.row()];
}

QModelIndex LayerTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    const int p = parent.isValid() ? nodeOf(parent) : -1;
    return createIndex(row, column, quintptr(p + 1));
}

QModelIndex LayerTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    const int p = int(child.internalId()) - 1;
    if (p < 0)
        return {};
    return createIndex(nodes_[p].row, 0, quintptr(nodes_[p].parent + 1));
}

int LayerTreeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.column() > 0)  // only the first column has children
        return 0;
    return int(childrenOf(parent.isValid() ? nodeOf(parent) : -1).size());
}

int LayerTreeModel::columnCount(const QModelIndex &) const { return ColumnCount; }

QVariant LayerTreeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::DoNotUseParent))
        return {};
    const Node &n = nodes_[nodeOf(index)];
    const QString path = QString::fromStdString(n.layer.path);
    const QString type = QString::fromStdString(n.layer.type);
    const LayerStatus status = n.status();
    const int column = index.column();

    if (role == Qt::DisplayRole || (role == SortRole && (column == NameColumn || column == TypeColumn))) {
        switch (column) {
        case NameColumn:  // the root module has no name of its own: its type names it
            return path.isEmpty() ? (type.isEmpty() ? QStringLiteral("(root)") : type)
                                  : path.section(QLatin1Char('.'), -1);
        case TypeColumn: return type;
        case StatusColumn: return n.statusText();
        case ForwardColumn: return healthSummary(n.forward);
        case GradientColumn: return healthSummary(n.grad);
        case FirstNonFiniteColumn: return n.firstNonFinite < 0 ? QString() : QString::number(n.firstNonFinite);
        }
    } else if (role == SortRole) {
        switch (column) {
        case StatusColumn: return int(status);
        case ForwardColumn: return sortFraction(n.forward);
        case GradientColumn: return sortFraction(n.grad);
        case FirstNonFiniteColumn: return n.firstNonFinite < 0 ? INT_MAX : n.firstNonFinite;
        }
    } else if (role == LayerIdRole) {
        return n.layer.id;
    } else if (role == Qt::DecorationRole && column == StatusColumn) {
        return icons_[std::size_t(status)];
    } else if (role == Qt::ToolTipRole) {
        QString tip = (path.isEmpty() ? QStringLiteral("(root module)") : path) + QStringLiteral(" (%1)").arg(type);
        tip += QStringLiteral("\nstatus: ") + n.statusText();
        tip += QStringLiteral("\nforward: ") + healthSummary(n.forward);
        tip += QStringLiteral("\ngradient: ") + healthSummary(n.grad);
        if (n.firstNonFinite >= 0)
            tip += QStringLiteral("\nfirst non-finite at step %1").arg(n.firstNonFinite);
        return tip;
    }
    return {};
}

QVariant LayerTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn: return tr("Name");
    case TypeColumn: return tr("Type");
    case StatusColumn: return tr("Status");
    case ForwardColumn: return tr("Forward");
    case GradientColumn: return tr("Gradient");
    case FirstNonFiniteColumn: return tr("First non-finite");
    }
    return {};
}

void LayerTreeModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    // Statuses and health texts are made in data(): every row's shown text, again.
    Q_EMIT layoutAboutToBeChanged();
    Q_EMIT layoutChanged();
}

QSortFilterProxyModel *makeLayerFilterProxy(QObject *parent)
{
    auto *proxy = new QSortFilterProxyModel(parent);
    proxy->setRecursiveFilteringEnabled(true);  // a matching layer keeps its ancestors visible
    proxy->setFilterKeyColumn(LayerTreeModel::NameColumn);
    proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy->setSortRole(LayerTreeModel::SortRole);  // numbers, so "10" sorts after "9"
    return proxy;
}

}  // namespace nanscope
