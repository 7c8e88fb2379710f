#pragma once
// One step of a data-parallel job, rank by rank: a row for the input, each layer and the loss, a
// column for each rank, each cell that rank's health of that layer at that step as measured
// before the all-reduce. The cell where a rank's non-finite value was born is marked, so the view
// answers which rank and which layer went non-finite first.
#include "nanscope/job_folder.h"
#include "models/layer_tree_model.h"

#include <QAbstractTableModel>

namespace nanscope {

class RankLayerModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role {
        LayerIdRole = Qt::UserRole + 1,  // the layer's id; kInputRow / kLossRow for those rows
        RankRole,                        // the column's rank
        StatusRole,                      // LayerStatus as an int; -1 where the rank has no record
    };
    static constexpr int kInputRow = -1;
    static constexpr int kLossRow = -2;
    static constexpr int kNoRow = -3;
    // The row an origin names: its layer, the input or the loss (the loss's own backward, which
    // names no layer, too); kNoRow for weights an earlier update broke in no layer.
    static int originRow(const Origin &origin);

    explicit RankLayerModel(QObject *parent = nullptr);

    // Replaces what is shown (model reset): the job's ranks at one step. `firstRank` is the rank
    // that went non-finite first in the whole job (its column header says so), -1: none.
    void setJobStep(JobStep step, int firstRank);
    void clear();
    const JobStep &jobStep() const { return step_; }
    // The rank whose non-finite value at this step was born first in the job's terms: the job's
    // first rank when it failed at this step, else the lowest failed rank; -1 when all are finite.
    int failedRankShown() const;
    // The row of `layer` (or kInputRow, kLossRow); -1 when there is none.
    int rowOfLayer(int layer) const;
    int columnOfRank(int rank) const;

    int rowCount(const QModelIndex &parent = {}) const final;
    int columnCount(const QModelIndex &parent = {}) const final;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const final;

private:
    int layerAtRow(int row) const;
    // The status of `layer` on the rank of `column`; Clean when finite.
    LayerStatus statusAt(int row, int column) const;
    bool bornAt(int row, int column) const;
    QString cellText(int row, int column) const;
    QString cellToolTip(int row, int column) const;

    JobStep step_;
    int firstRank_ = -1;
};

}  // namespace nanscope
