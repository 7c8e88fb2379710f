#include "models/event_log_model.h"

#include "models/core_text.h"

#include "models/origin_text.h"

#include <QBrush>

#include <algorithm>

namespace nanscope {

QString eventKindName(EventKind kind)
{
    switch (kind) {
    case EventKind::Info: return EventLogModel::tr("info");
    case EventKind::FirstNonFinite: return EventLogModel::tr("first non-finite");
    case EventKind::Recovery: return EventLogModel::tr("recovery");
    case EventKind::Rollback: return EventLogModel::tr("rollback");
    case EventKind::ControlChange: return EventLogModel::tr("control change");
    case EventKind::Paused: return EventLogModel::tr("paused");
    case EventKind::Error: return EventLogModel::tr("error");
    case EventKind::Warning: return EventLogModel::tr("warning");
    }
    return {};
}

namespace {

const char *const kChangeLine = QT_TRANSLATE_NOOP("nanscope::EventLogModel", "%1: %2 → %3");

QString controlName(const std::string &id)
{
    const std::pair<const char *, QString> names[] = {
        {"lr", EventLogModel::tr("learning rate")},  {"clip", EventLogModel::tr("gradient clipping")},
        {"recovery", EventLogModel::tr("recovery")}, {"pause", EventLogModel::tr("pause on non-finite")},
        {"precision", EventLogModel::tr("precision")}, {"loss-scaling", EventLogModel::tr("loss scaling")},
        {"fix", EventLogModel::tr("the lesson's fix")}};
    for (const auto &[known, name] : names)
        if (id == known)
            return name;
    return QString::fromStdString(id);
}

QString controlValue(const std::string &value)
{
    if (value == "on")
        return EventLogModel::tr("on");
    if (value == "off")
        return EventLogModel::tr("off");
    return QString::fromStdString(value);
}

}  // namespace

QString EventLogModel::messageText(const Event &e)
{
    // The core's English is recorded with the run; what it says in fields is said again here, in the
    // window's language. Text without fields (an error's message) stays as recorded.
    if ((e.kind == EventKind::FirstNonFinite || e.kind == EventKind::Paused) && e.origin.valid())
        return explainOrigin(e.origin);
    const QString line = tr(kChangeLine);
    if (e.kind == EventKind::ControlChange && !e.changes.empty() && line != QLatin1String(kChangeLine)) {
        QStringList parts;
        for (const ControlChange &c : e.changes)
            parts << line.arg(controlName(c.control), controlValue(c.before), controlValue(c.after));
        return parts.join(tr("; "));
    }
    if (const QString said = coreMessageText(e.message); !said.isEmpty())
        return said;
    return QString::fromStdString(e.text);
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
        case MessageColumn: return messageText(e);
        }
        break;
    case Qt::ToolTipRole:  // messages can be longer than the column
        if (index.column() == MessageColumn)
            return messageText(e);
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
    case StepColumn: return tr("Step");
    case KindColumn: return tr("Kind");
    case LayerColumn: return tr("Layer");
    case MessageColumn: return tr("Message");
    }
    return {};
}

void EventLogModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!rows_.empty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1), {Qt::DisplayRole, Qt::ToolTipRole});
}

}  // namespace nanscope
