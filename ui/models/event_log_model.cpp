#include "models/event_log_model.h"

#include <QBrush>

#include <algorithm>

namespace nanscope {

QString eventKindName(EventKind kind)
{
    switch (kind) {
    case EventKind::Info: return QStringLiteral("info");
    case EventKind::FirstNonFinite: return QStringLiteral("first non-finite");
    case EventKind::Recovery: return QStringLiteral("recovery");
    case EventKind::Rollback: return QStringLiteral("rollback");
    case EventKind::ControlChange: return QStringLiteral("control change");
    case EventKind::Paused: return QStringLiteral("paused");
    case EventKind::Error: return QStringLiteral("error");
    case EventKind::Warning: return QStringLiteral("warning");
    }
    return {};
}

QColor eventKindColor(EventKind kind)
{
    switch (kind) {
    case EventKind::Error:
    case EventKind::FirstNonFinite: return QColor(0xc6, 0x28, 0x28);  // red
    case EventKind::Warning:
    case EventKind::Recovery:
    case EventKind::Rollback: return QColor(0xef, 0x6c, 0x00);       // orange
    case EventKind::ControlChange: return QColor(0x15, 0x65, 0xc0);  // blue
    case EventKind::Info:
    case EventKind::Paused: break;
    }
    return {};
}

EventLogModel::EventLogModel(int capacity, QObject *parent)
    : QAbstractTableModel(parent), capacity_(std::max(1, capacity))
{
}

void EventLogModel::clear()
{
    beginResetModel();
    rows_.clear();
    dropped_ = 0;
    endResetModel();
}

void EventLogModel::setLayers(const std::vector<Layer> &layers)
{
    layers_.clear();
    for (const Layer &layer : layers)
        layers_.emplace(layer.id, layer);
    if (!rows_.empty())  // rows already shown resolve their layer anew
        Q_EMIT dataChanged(index(0, LayerColumn), index(rowCount() - 1, LayerColumn));
}

void EventLogModel::append(const Event &event) { append(QVector<Event>{event}); }

void EventLogModel::append(const QVector<Event> &events)
{
    if (events.isEmpty())
        return;
    // A batch larger than the log: its oldest part would be removed at once, so never show it.
    const qsizetype skip = std::max<qsizetype>(0, events.size() - capacity_);
    dropped_ += skip;
    const int incoming = int(events.size() - skip);
    const int overflow = int(rows_.size()) + incoming - capacity_;
    if (overflow > 0) {
        beginRemoveRows({}, 0, overflow - 1);
        rows_.erase(rows_.begin(), rows_.begin() + overflow);
        dropped_ += overflow;
        endRemoveRows();
    }
    const int first = int(rows_.size());
    beginInsertRows({}, first, first + incoming - 1);
    rows_.insert(rows_.end(), events.begin() + skip, events.end());
    endInsertRows();
}

int EventLogModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int EventLogModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString EventLogModel::layerName(int id) const
{
    if (id < 0)
        return {};
    const auto it = layers_.find(id);
    if (it == layers_.end())  // layers not known (yet): still say which one
        return QStringLiteral("#%1").arg(id);
    const Layer &layer = it->second;
    return layer.path.empty() ? QString::fromStdString(layer.type) : QString::fromStdString(layer.path);
}

QVariant EventLogModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Event &e = rows_[std::size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case StepColumn: return e.step < 0 ? QVariant(QString()) : QVariant(e.step);
        case KindColumn: return eventKindName(e.kind);
        case LayerColumn: return layerName(e.layer);
        case MessageColumn: return QString::fromStdString(e.text);
        }
        break;
    case Qt::ToolTipRole:  // messages can be longer than the column
        if (index.column() == MessageColumn)
            return QString::fromStdString(e.text);
        break;
    case Qt::ForegroundRole: {
        const QColor color = eventKindColor(e.kind);
        return color.isValid() ? QVariant(QBrush(color)) : QVariant();
    }
    case StepRole: return e.step;
    case LayerIdRole: return e.layer;
    case KindRole: return int(e.kind);
    }
    return {};
}

QVariant EventLogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case StepColumn: return QStringLiteral("Step");
    case KindColumn: return QStringLiteral("Kind");
    case LayerColumn: return QStringLiteral("Layer");
    case MessageColumn: return QStringLiteral("Message");
    }
    return {};
}

}  // namespace nanscope
