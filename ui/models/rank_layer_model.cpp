#include "models/rank_layer_model.h"

#include "nanscope/health_kinds.h"

#include <QFont>

namespace nanscope {

namespace {

QString counts(const TensorHealth &h)
{
    QStringList parts;
    if (h.nan)
        parts << QStringLiteral("%1 NaN").arg(h.nan);
    if (h.posInf)
        parts << QStringLiteral("%1 +Inf").arg(h.posInf);
    if (h.negInf)
        parts << QStringLiteral("%1 −Inf").arg(h.negInf);
    return parts.join(QStringLiteral(", "));
}

}  // namespace

int RankLayerModel::originRow(const Origin &o)
{
    if (o.phase == Phase::Input)
        return kInputRow;
    if (o.phase == Phase::Loss)
        return kLossRow;
    if (o.layer >= 0)
        return o.layer;
    return o.phase == Phase::Backward ? kLossRow : kNoRow;
}

RankLayerModel::RankLayerModel(QObject *parent) : QAbstractTableModel(parent) {}

void RankLayerModel::setJobStep(JobStep step, int firstRank)
{
    beginResetModel();
    step_ = std::move(step);
    firstRank_ = firstRank;
    endResetModel();
}

void RankLayerModel::clear() { setJobStep({}, -1); }

int RankLayerModel::failedRankShown() const
{
    int lowest = -1;
    for (const RankStep &r : step_.ranks) {
        if (!r.record || !r.record->failed())
            continue;
        if (r.rank == firstRank_)
            return r.rank;
        if (lowest < 0)
            lowest = r.rank;
    }
    return lowest;
}

int RankLayerModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || step_.ranks.empty() ? 0 : int(step_.layers.size()) + 2;
}

int RankLayerModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(step_.ranks.size());
}

int RankLayerModel::layerAtRow(int row) const
{
    if (row == 0)
        return kInputRow;
    if (row == int(step_.layers.size()) + 1)
        return kLossRow;
    return row - 1;
}

int RankLayerModel::rowOfLayer(int layer) const
{
    if (step_.ranks.empty())
        return -1;
    if (layer == kInputRow)
        return 0;
    if (layer == kLossRow)
        return int(step_.layers.size()) + 1;
    return layer >= 0 && layer < int(step_.layers.size()) ? layer + 1 : -1;
}

int RankLayerModel::columnOfRank(int rank) const
{
    for (std::size_t c = 0; c < step_.ranks.size(); ++c)
        if (step_.ranks[c].rank == rank)
            return int(c);
    return -1;
}

bool RankLayerModel::bornAt(int row, int column) const
{
    const StepRecordPtr &r = step_.ranks[std::size_t(column)].record;
    return r && r->failed() && originRow(r->origin) == layerAtRow(row);
}

LayerStatus RankLayerModel::statusAt(int row, int column) const
{
    const StepRecord &r = *step_.ranks[std::size_t(column)].record;
    if (bornAt(row, column))
        return r.origin.phase == Phase::Parameter || r.origin.phase == Phase::Update ? LayerStatus::BadWeights
                                                                                     : LayerStatus::BornHere;
    const int layer = layerAtRow(row);
    if (layer == kInputRow)
        return r.inputHealth.hasNonFinite() ? LayerStatus::PassedOn : LayerStatus::Clean;
    if (layer == kLossRow)
        return r.lossHealth.hasNonFinite() ? LayerStatus::PassedOn : LayerStatus::Clean;
    if (std::size_t(layer) >= r.layers.size())
        return LayerStatus::Clean;
    const LayerHealth &h = r.layers[std::size_t(layer)];
    if (h.params.hasNonFinite())
        return LayerStatus::BadWeights;
    return h.forward.hasNonFinite() || h.grad.hasNonFinite() || h.paramGrads.hasNonFinite() ? LayerStatus::PassedOn
                                                                                            : LayerStatus::Clean;
}

QString RankLayerModel::cellText(int row, int column) const
{
    const StepRecord &r = *step_.ranks[std::size_t(column)].record;
    const int layer = layerAtRow(row);
    QString text;
    if (layer == kInputRow) {
        text = counts(r.inputHealth);
    } else if (layer == kLossRow) {
        text = counts(r.lossHealth);
    } else if (std::size_t(layer) < r.layers.size()) {
        // The first kind that went non-finite, in the order the step computes them.
        for (const HealthKindInfo &k : kHealthKinds) {  // each kind a rank measured before the all-reduce
            const TensorHealth &h = r.layers[std::size_t(layer)].*k.member;
            if (h.hasNonFinite()) {
                text = QStringLiteral("%1: %2").arg(tr(k.label), counts(h));
                break;
            }
        }
    }
    if (bornAt(row, column))
        return QStringLiteral("◆ ") + (text.isEmpty() ? QString::fromLatin1(phaseName(r.origin.phase)) : text);
    return text;
}

QString RankLayerModel::cellToolTip(int row, int column) const
{
    const RankStep &rs = step_.ranks[std::size_t(column)];
    const StepRecord &r = *rs.record;
    const int layer = layerAtRow(row);
    QStringList lines;
    lines << tr("Rank %1, step %2").arg(rs.rank).arg(r.step);
    if (layer == kInputRow)
        lines << tr("input: %1").arg(healthSummary(r.inputHealth));
    else if (layer == kLossRow)
        lines << tr("loss: %1").arg(healthSummary(r.lossHealth));
    else if (std::size_t(layer) < r.layers.size())
        for (const HealthKindInfo &k : kHealthKinds)
            lines << QStringLiteral("%1: %2").arg(tr(k.label), healthSummary(r.layers[std::size_t(layer)].*k.member));
    if (bornAt(row, column)) {
        lines << tr("Born here on this rank: %1").arg(QString::fromStdString(r.origin.explanation));
        if (!r.origin.op.empty())
            lines << tr("op: %1").arg(QString::fromStdString(r.origin.op));
    }
    return lines.join(QLatin1Char('\n'));
}

QVariant RankLayerModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.column() >= columnCount() || index.row() >= rowCount())
        return {};
    const RankStep &rs = step_.ranks[std::size_t(index.column())];
    if (role == LayerIdRole)
        return layerAtRow(index.row());
    if (role == RankRole)
        return rs.rank;
    if (!rs.record) {
        if (role == Qt::DisplayRole)
            return rs.error.empty() ? tr("—") : tr("unreadable");
        if (role == Qt::ToolTipRole)
            return rs.error.empty() ? tr("Rank %1 has not recorded step %2 (yet)").arg(rs.rank).arg(step_.step)
                                    : QString::fromStdString(rs.error);
        if (role == StatusRole)
            return -1;
        return {};
    }
    const LayerStatus status = statusAt(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole: return cellText(index.row(), index.column());
    case Qt::ToolTipRole: return cellToolTip(index.row(), index.column());
    case StatusRole: return int(status);
    case Qt::BackgroundRole:
        if (status == LayerStatus::Clean)
            return {};
        return layerStatusColor(status).lighter(status == LayerStatus::BornHere ? 150 : 170);
    case Qt::FontRole:
        if (bornAt(index.row(), index.column())) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    default: return {};
    }
}

QVariant RankLayerModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Vertical) {
        if (section < 0 || section >= rowCount())
            return {};
        const int layer = layerAtRow(section);
        if (role != Qt::DisplayRole)
            return {};
        if (layer == kInputRow)
            return tr("input");
        if (layer == kLossRow)
            return tr("loss");
        const Layer &l = step_.layers[std::size_t(layer)];
        return l.path.empty() ? tr("(model)") : QString::fromStdString(l.path);
    }
    if (section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    const RankStep &rs = step_.ranks[std::size_t(section)];
    const bool failed = rs.record && rs.record->failed();
    if (role == Qt::DisplayRole)
        return failed ? tr("rank %1 ◆").arg(rs.rank) : tr("rank %1").arg(rs.rank);
    if (role == Qt::ToolTipRole) {
        if (!rs.record)
            return rs.error.empty() ? tr("no step %1 recorded yet").arg(step_.step) : QString::fromStdString(rs.error);
        QString tip =
            failed ? QString::fromStdString(rs.record->origin.explanation) : tr("finite before the all-reduce");
        if (rs.rank == firstRank_)
            tip += tr("\nThe rank of the job that went non-finite first.");
        return tip;
    }
    if (role == Qt::FontRole && rs.rank == firstRank_) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

}  // namespace nanscope
