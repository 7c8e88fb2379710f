#pragma once
// Hand-made layers and step records for tst_models: a small module tree whose health is set per
// step, so each test states only what differs from "all finite".
#include "models/layer_tree_model.h"

#include <QAbstractItemModel>
#include <QStringList>

#include <memory>
#include <vector>

namespace nanscope::fixtures {

inline const QString kDash(QChar(0x2014));

// A root, two instances of Linear (fc1, fc2), a BatchNorm and a block with a nested conv.
inline std::vector<Layer> sampleLayers()
{
    return {{0, "", "Net", -1},
            {1, "fc1", "Linear", 0},
            {2, "bn1", "BatchNorm1d", 0},
            {3, "block", "Sequential", 0},
            {4, "block.conv", "Conv1d", 3},
            {5, "fc2", "Linear", 0}};
}

inline TensorHealth healthy(double absMax = 1.5, std::int64_t numel = 4096)
{
    TensorHealth h;
    h.present = true;
    h.numel = numel;
    h.min = -absMax;
    h.max = h.absMax = absMax;
    return h;
}

inline TensorHealth withNaN(std::int64_t nan)
{
    TensorHealth h = healthy(1.0);
    h.nan = nan;
    return h;
}

// One step over sampleLayers(): all finite (forward |max| 1.5, gradient 0.5) unless set.
struct Step {
    StepRecord r;
    explicit Step(int step)
    {
        r.step = step;
        r.layers.assign(6, LayerHealth{healthy(), healthy(0.5), healthy(), healthy(), true});
    }
    Step &forward(int id, const TensorHealth &h)
    {
        r.layers[id].forward = h;
        return *this;
    }
    Step &grad(int id, const TensorHealth &h)
    {
        r.layers[id].grad = h;
        return *this;
    }
    Step &producedBy(int id)
    {
        r.origin = Origin{r.step, Phase::Forward, id, "", "", "", true, ""};
        return *this;
    }
    operator StepRecordPtr() const { return std::make_shared<const StepRecord>(r); }
};

inline QString cell(const LayerTreeModel &m, int id, int column, int role = Qt::DisplayRole)
{
    return m.indexForLayer(id, column).data(role).toString();
}

inline QStringList list(const char *commaSeparated)
{
    return QString::fromLatin1(commaSeparated).split(u',', Qt::SkipEmptyParts);
}

// The names a tree view would show, depth first.
inline QStringList visibleNames(const QAbstractItemModel &m, const QModelIndex &parent = {})
{
    QStringList names;
    for (int row = 0; row < m.rowCount(parent); ++row) {
        const QModelIndex i = m.index(row, LayerTreeModel::NameColumn, parent);
        names << i.data().toString() << visibleNames(m, i);
    }
    return names;
}

}  // namespace nanscope::fixtures
