#pragma once
// The run's events (first non-finite values, recoveries, rollbacks, control changes, errors) as
// a table. Bounded: a long run keeps the newest `capacity` rows and counts what it dropped, so
// memory stays flat over a million steps.
#include "nanscope/records.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QVector>

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace nanscope {

QString eventKindName(EventKind kind);  // "first non-finite", "rollback", ...
// Red for errors and first non-finite values, orange for recoveries and rollbacks, blue for
// control changes; invalid (the view's default) for the rest.
QColor eventKindColor(EventKind kind);

class EventLogModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StepColumn, KindColumn, LayerColumn, MessageColumn, ColumnCount };
    enum Role {
        StepRole = Qt::UserRole + 1,  // int, -1 when the event has no step
        LayerIdRole,                  // int, -1 when the event has no layer
        KindRole,                     // int(EventKind)
    };

    explicit EventLogModel(int capacity = 10000, QObject *parent = nullptr);

    void clear();  // a new run: no rows, nothing dropped (the layers stay)
    void setLayers(const std::vector<Layer> &layers);
    void append(const nanscope::Event &event);
    void append(const QVector<nanscope::Event> &events);  // one insertion for the whole batch
    void retranslate();  // the language changed: headers and kinds again

    int capacity() const { return capacity_; }
    std::int64_t droppedCount() const { return dropped_; }

    int rowCount(const QModelIndex &parent = {}) const final;
    int columnCount(const QModelIndex &parent = {}) const final;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const final;

    // The event's message in the current language (the recorded English where nothing translates it).
    static QString messageText(const Event &event);

private:
    QString layerName(int id) const;

    int capacity_;
    std::int64_t dropped_ = 0;
    std::deque<Event> rows_;  // oldest first; the front is dropped when full
    std::unordered_map<int, Layer> layers_;
};

}  // namespace nanscope
