#pragma once
// The module hierarchy as a tree, with each layer's NaN status. Records arrive in batches while
// a run streams; they update rows in place (dataChanged), never with a reset, so the view keeps
// its expansion and selection. Filtering and sorting happen in a proxy (makeLayerFilterProxy).
#include "nanscope/records.h"
#include "nanscope/step_chunk.h"

#include <QAbstractItemModel>
#include <QColor>
#include <QIcon>
#include <QVector>

#include <array>
#include <unordered_map>
#include <vector>

class QSortFilterProxyModel;

namespace nanscope {

// Ordered: the rank is the sort value. BornHere: a non-finite value was born in this layer (in
// forward or backward); BadWeights: its parameters were non-finite (an update made them so);
// PassedOn: it only carried non-finite values born elsewhere. A status is history: it stays after
// the layer is clean again (the Status column then says when it recovered).
enum class LayerStatus { Clean, PassedOn, BadWeights, BornHere };

QString layerStatusName(LayerStatus status);  // "clean", "passed on", "weights non-finite", "born here"
QColor layerStatusColor(LayerStatus status);  // green, orange, purple, red
// "2 NaN, 1 +Inf / 4096", "finite, |max| 3.21", or an em dash when nothing was observed.
QString healthSummary(const TensorHealth &health);

class LayerTreeModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        TypeColumn,
        StatusColumn,
        ForwardColumn,
        GradientColumn,
        FirstNonFiniteColumn,
        ColumnCount
    };
    enum Role {
        SortRole = Qt::UserRole + 1,  // numbers where the column holds numbers, text otherwise
        LayerIdRole,
    };

    explicit LayerTreeModel(QObject *parent = nullptr);

    // A new run: replaces the tree (model reset) and forgets all health seen so far.
    void setLayers(const std::vector<Layer> &layers);
    // Live update: dataChanged for the rows whose shown values changed, nothing else.
    void addRecords(const QVector<nanscope::StepRecordPtr> &records);
    // A long recorded run's earlier steps, folded: the same statuses and first steps as their
    // records (the health shown comes from the records after them).
    void addChunks(const QVector<nanscope::StepChunkPtr> &chunks);

    void retranslate();  // the language changed: headers, statuses and health texts again

    QModelIndex indexForLayer(int id, int column = 0) const;
    int layerAt(const QModelIndex &index) const;  // -1 for an invalid index

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const final;
    QModelIndex parent(const QModelIndex &child) const final;
    int rowCount(const QModelIndex &parent = {}) const final;
    int columnCount(const QModelIndex &parent = {}) const final;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const final;

private:
    struct Node {
        Layer layer;
        int parent = -1;  // node index of the enclosing layer, -1 at the top level
        int row = 0;      // position among its siblings
        std::vector<int> children;
        TensorHealth forward;  // from the latest record
        TensorHealth grad;
        int firstNonFinite = -1;
        int bornStep = -1;          // the first step a non-finite value was born here
        int badWeightsStep = -1;    // the first step its parameters were non-finite
        int lastBadStep = -1;       // the latest step anything of it was non-finite
        int recoveredStep = -1;     // the first clean step after lastBadStep
        bool sawNonFinite = false;  // forward or gradient was non-finite in some step

        LayerStatus status() const;
        QString statusText() const;  // "born here at step 8, recovered at step 9"
    };

    int nodeOf(const QModelIndex &index) const;
    const std::vector<int> &childrenOf(int node) const { return node < 0 ? top_ : nodes_[node].children; }
    bool apply(Node &node, const StepRecord &record, const LayerHealth *health) const;
    struct Marks {
        bool bad = false;       // its forward output or gradient was non-finite
        bool born = false;      // the step's non-finite value was born here
        bool weights = false;   // its parameters were non-finite
        bool observed = false;  // the step measured it: without a mark, it was clean then
    };
    static bool mark(Node &node, int step, Marks marks);
    void emitChanged(const std::vector<bool> &changed);

    std::vector<Node> nodes_;  // in the order setLayers received them
    std::vector<int> top_;     // nodes without a parent: normally just the root module
    std::unordered_map<int, int> nodeOfId_;
    std::array<QIcon, 4> icons_;
};

// A proxy for the tree view: recursive filtering on the name column (ancestors of a match stay
// visible), case-insensitive, sorting by LayerTreeModel::SortRole. The caller sets the source.
QSortFilterProxyModel *makeLayerFilterProxy(QObject *parent);

}  // namespace nanscope
