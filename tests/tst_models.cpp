// The layer tree and the event log: real values, live updates without resets, bounded memory.
// Every model and proxy runs under QAbstractItemModelTester from before its first row.
#include "models/event_log_model.h"
#include "models/layer_tree_model.h"
#include "model_fixtures.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QtTest>

#include <memory>

using namespace nanscope;
using namespace nanscope::fixtures;
using namespace Qt::StringLiterals;
using Tree = LayerTreeModel;
using Log = EventLogModel;

Q_DECLARE_METATYPE(nanscope::TensorHealth)
Q_DECLARE_METATYPE(nanscope::EventKind)

constexpr auto QtTestMode = QAbstractItemModelTester::FailureReportingMode::QtTest;

class TestModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void treeFollowsTheModuleHierarchy_data()
    {
        QTest::addColumn<int>("id");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("type");
        QTest::addColumn<int>("parentId");
        QTest::addColumn<int>("row");
        QTest::addRow("root is named by its type") << 0 << "Net"
                                                   << "Net" << -1 << 0;
        QTest::addRow("fc1") << 1 << "fc1"
                             << "Linear" << 0 << 0;
        QTest::addRow("bn1") << 2 << "bn1"
                             << "BatchNorm1d" << 0 << 1;
        QTest::addRow("block") << 3 << "block"
                               << "Sequential" << 0 << 2;
        QTest::addRow("nested conv shows its last path part") << 4 << "conv"
                                                              << "Conv1d" << 3 << 0;
        QTest::addRow("second Linear") << 5 << "fc2"
                                       << "Linear" << 0 << 3;
    }
    void treeFollowsTheModuleHierarchy()
    {
        QFETCH(int, id);
        QFETCH(QString, name);
        QFETCH(QString, type);
        QFETCH(int, parentId);
        QFETCH(int, row);
        Tree model;
        QAbstractItemModelTester tester(&model, QtTestMode);
        model.setLayers(sampleLayers());
        QCOMPARE(model.rowCount(), 1);  // only the root module at the top
        QCOMPARE(model.rowCount(model.indexForLayer(0)), 4);
        const QModelIndex i = model.indexForLayer(id);
        QCOMPARE(i.row(), row);
        QCOMPARE(i.data().toString(), name);
        QCOMPARE(cell(model, id, Tree::TypeColumn), type);
        QCOMPARE(i.data(Tree::LayerIdRole).toInt(), id);
        QCOMPARE(model.layerAt(i), id);
        QCOMPARE(model.layerAt(model.indexForLayer(id, Tree::GradientColumn)), id);
        QCOMPARE(model.layerAt(i.parent()), parentId);
        QCOMPARE(cell(model, id, Tree::StatusColumn), u"clean"_s);
        QCOMPARE(cell(model, id, Tree::ForwardColumn), kDash);  // nothing observed yet
        QVERIFY(!model.indexForLayer(99).isValid());
        QCOMPARE(model.layerAt({}), -1);
    }

    void statusesAfterAProducedNaN_data()
    {
        QTest::addColumn<int>("id");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("firstStep");
        QTest::addColumn<QString>("forward");
        QTest::addColumn<QString>("gradient");
        const char *ok = "finite, |max| 0.5";
        QTest::addRow("root passes fc1's NaN on") << 0 << "passed on from step 3"
                                                  << "3"
                                                  << "4096 NaN / 4096" << ok;
        QTest::addRow("fc1 produced it") << 1 << "born here at step 3"
                                         << "3"
                                         << "4096 NaN / 4096" << ok;
        QTest::addRow("bn1 passed it on") << 2 << "passed on from step 3"
                                          << "3"
                                          << "12 NaN / 4096" << ok;
        QTest::addRow("block stays clean") << 3 << "clean"
                                           << ""
                                           << "finite, |max| 1.5" << ok;
        QTest::addRow("nested conv stays clean") << 4 << "clean"
                                                 << ""
                                                 << "finite, |max| 1.5" << ok;
        QTest::addRow("fc2 later, in its gradient") << 5 << "passed on from step 4"
                                                    << "4"
                                                    << "finite, |max| 1.5"
                                                    << "2 NaN / 4096";
    }
    void statusesAfterAProducedNaN()
    {
        QFETCH(int, id);
        QFETCH(QString, status);
        QFETCH(QString, firstStep);
        QFETCH(QString, forward);
        QFETCH(QString, gradient);
        Tree model;
        QAbstractItemModelTester tester(&model, QtTestMode);
        model.setLayers(sampleLayers());
        model.addRecords({Step(1), Step(2)});
        model.addRecords(
            {Step(3).forward(1, withNaN(4096)).forward(2, withNaN(12)).forward(0, withNaN(4096)).producedBy(1)});
        model.addRecords(
            {Step(4).forward(1, withNaN(4096)).forward(2, withNaN(12)).forward(0, withNaN(4096)).grad(5, withNaN(2))});
        QCOMPARE(cell(model, id, Tree::StatusColumn), status);
        QCOMPARE(cell(model, id, Tree::FirstNonFiniteColumn), firstStep);
        QCOMPARE(cell(model, id, Tree::ForwardColumn), forward);
        QCOMPARE(cell(model, id, Tree::GradientColumn), gradient);
        QVERIFY(cell(model, id, 0, Qt::ToolTipRole).contains(u"status: "_s + status));
        // The sort rank maps back to the status, and the icon is drawn in its colour.
        const QModelIndex i = model.indexForLayer(id, Tree::StatusColumn);
        const auto rank = LayerStatus(i.data(Tree::SortRole).toInt());
        QVERIFY(status.startsWith(layerStatusName(rank)));
        const QIcon icon = qvariant_cast<QIcon>(i.data(Qt::DecorationRole));
        QCOMPARE(icon.pixmap(16, 16).toImage().pixelColor(8, 8), layerStatusColor(rank));
    }

    void healthSummary_data()
    {
        QTest::addColumn<TensorHealth>("health");
        QTest::addColumn<QString>("expected");
        TensorHealth mixed = withNaN(2);
        mixed.posInf = 1;
        TensorHealth negative = healthy(1.0, 10);
        negative.negInf = 5;
        TensorHealth empty = healthy(0.0, 0);
        empty.absMax = std::numeric_limits<double>::quiet_NaN();
        QTest::addRow("not observed") << TensorHealth{} << kDash;
        QTest::addRow("NaN and +Inf") << mixed << "2 NaN, 1 +Inf / 4096";
        QTest::addRow("-Inf only") << negative << "5 -Inf / 10";
        QTest::addRow("finite, three digits") << healthy(3.2149) << "finite, |max| 3.21";
        QTest::addRow("finite but empty") << empty << "finite";
    }
    void healthSummary()
    {
        QFETCH(TensorHealth, health);
        QFETCH(QString, expected);
        QCOMPARE(nanscope::healthSummary(health), expected);
    }

    void liveUpdateChangesRowsInPlace()
    {
        Tree model;
        QAbstractItemModelTester tester(&model, QtTestMode);
        model.setLayers(sampleLayers());
        model.addRecords({Step(0)});
        const QPersistentModelIndex conv(model.indexForLayer(4));
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy layout(&model, &QAbstractItemModel::layoutChanged);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.addRecords({Step(1)});  // shows the same values: nothing to repaint
        QCOMPARE(changed.count(), 0);
        model.addRecords({Step(2).forward(1, withNaN(7)).producedBy(1)});
        QCOMPARE(changed.count(), 1);  // fc1's row only, all columns
        QCOMPARE(changed.at(0).at(0).value<QModelIndex>(), model.indexForLayer(1, 0));
        QCOMPARE(changed.at(0).at(1).value<QModelIndex>(), model.indexForLayer(1, Tree::ColumnCount - 1));
        QCOMPARE(cell(model, 1, Tree::FirstNonFiniteColumn), u"2"_s);
        changed.clear();
        model.addRecords({Step(3).forward(2, withNaN(1)).forward(3, withNaN(1)).forward(4, withNaN(1))});
        // fc1 turned finite, bn1 and block went NaN: one range of adjacent rows; conv under block.
        QCOMPARE(changed.count(), 2);
        QCOMPARE(changed.at(0).at(0).value<QModelIndex>(), model.indexForLayer(1, 0));
        QCOMPARE(changed.at(0).at(1).value<QModelIndex>(), model.indexForLayer(3, Tree::ColumnCount - 1));
        QCOMPARE(changed.at(1).at(0).value<QModelIndex>(), model.indexForLayer(4, 0));
        QCOMPARE(changed.at(1).at(1).value<QModelIndex>(), model.indexForLayer(4, Tree::ColumnCount - 1));
        // History, not the present: still born here, and since when it is clean again.
        QCOMPARE(cell(model, 1, Tree::StatusColumn), u"born here at step 2, recovered at step 3"_s);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(layout.count(), 0);
        QVERIFY(conv.isValid());
        QCOMPARE(model.layerAt(conv), 4);
        QCOMPARE(model.layerAt(conv.parent()), 3);
    }

    // Through a sorting proxy in a real view: a live update that re-sorts keeps both.
    void viewKeepsExpansionAndSelection()
    {
        Tree model;
        std::unique_ptr<QSortFilterProxyModel> proxy(makeLayerFilterProxy(nullptr));
        proxy->setSourceModel(&model);
        QAbstractItemModelTester proxyTester(proxy.get(), QtTestMode);
        QTreeView view;
        view.setModel(proxy.get());
        view.setSortingEnabled(true);
        view.sortByColumn(Tree::StatusColumn, Qt::DescendingOrder);
        model.setLayers(sampleLayers());
        view.expandAll();
        const auto viewIndex = [&](int id) { return proxy->mapFromSource(model.indexForLayer(id)); };
        view.setCurrentIndex(viewIndex(4));
        model.addRecords({Step(1).forward(5, withNaN(1)).producedBy(5)});  // fc2 moves to the top
        QCOMPARE(proxy->index(0, 0, viewIndex(0)).data().toString(), u"fc2"_s);
        QVERIFY(view.isExpanded(viewIndex(3)));
        QCOMPARE(model.layerAt(proxy->mapToSource(view.currentIndex())), 4);
    }

    void newRunResetsTheTree()
    {
        Tree model;
        QAbstractItemModelTester tester(&model, QtTestMode);
        model.setLayers(sampleLayers());
        model.addRecords({Step(5).forward(1, withNaN(1)).producedBy(1)});
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setLayers({{0, "", "Mlp", -1}, {1, "fc1", "Linear", 0}});
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.indexForLayer(0).data().toString(), u"Mlp"_s);
        QCOMPARE(cell(model, 1, Tree::StatusColumn), u"clean"_s);
        QVERIFY(!model.indexForLayer(4).isValid());
    }

    void proxyFilterKeepsAncestors_data()
    {
        QTest::addColumn<QString>("filter");
        QTest::addColumn<QStringList>("visible");
        QTest::addRow("nested match keeps root and block") << "conv" << list("Net,block,conv");
        QTest::addRow("two matches") << "fc" << list("Net,fc1,fc2");
        QTest::addRow("case-insensitive") << "BN" << list("Net,bn1");
        QTest::addRow("no match") << "lstm" << list("");
        QTest::addRow("no filter") << "" << list("Net,fc1,bn1,block,conv,fc2");
    }
    void proxyFilterKeepsAncestors()
    {
        QFETCH(QString, filter);
        QFETCH(QStringList, visible);
        Tree model;
        std::unique_ptr<QSortFilterProxyModel> proxy(makeLayerFilterProxy(nullptr));
        proxy->setSourceModel(&model);
        QAbstractItemModelTester modelTester(&model, QtTestMode);
        QAbstractItemModelTester proxyTester(proxy.get(), QtTestMode);
        model.setLayers(sampleLayers());
        proxy->setFilterFixedString(filter);
        model.addRecords({Step(1).forward(4, withNaN(3))});  // live data under a filter
        QCOMPARE(visibleNames(*proxy), visible);
    }

    void proxySortsNumerically_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<Qt::SortOrder>("order");
        QTest::addColumn<QStringList>("children");  // of the root, in the proxy's order
        // As text "10" < "2" < "9" and "4096 NaN" < "100 NaN"; the SortRole gives numbers.
        QTest::addRow("first step, earliest first")
            << int(Tree::FirstNonFiniteColumn) << Qt::AscendingOrder << list("fc1,fc2,bn1,block");
        QTest::addRow("forward, most non-finite first")
            << int(Tree::ForwardColumn) << Qt::DescendingOrder << list("fc1,bn1,fc2,block");
        QTest::addRow("status, producer first")
            << int(Tree::StatusColumn) << Qt::DescendingOrder << list("fc1,bn1,fc2,block");
    }
    void proxySortsNumerically()
    {
        QFETCH(int, column);
        QFETCH(Qt::SortOrder, order);
        QFETCH(QStringList, children);
        Tree model;
        std::unique_ptr<QSortFilterProxyModel> proxy(makeLayerFilterProxy(nullptr));
        proxy->setSourceModel(&model);
        QAbstractItemModelTester modelTester(&model, QtTestMode);
        QAbstractItemModelTester proxyTester(proxy.get(), QtTestMode);
        model.setLayers(sampleLayers());
        proxy->sort(column, order);  // before the data: the live update re-sorts
        model.addRecords({Step(2).forward(1, withNaN(4096)).producedBy(1),
                          Step(9).forward(1, withNaN(4096)).forward(5, withNaN(10)),
                          Step(10).forward(1, withNaN(4096)).forward(5, withNaN(10)).forward(2, withNaN(100))});
        const QModelIndex root = proxy->index(0, 0);
        QStringList names;
        for (int row = 0; row < proxy->rowCount(root); ++row)
            names << proxy->index(row, 0, root).data().toString();
        QCOMPARE(names, children);
    }

    void eventLogIsBounded_data()
    {
        QTest::addColumn<QList<int>>("batches");  // sizes; a 1 goes through append(const Event &)
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dropped");
        QTest::addRow("under capacity") << QList<int>{3} << 3 << 0;
        QTest::addRow("exactly full") << QList<int>{5} << 5 << 0;
        QTest::addRow("one by one past capacity") << QList<int>{1, 1, 1, 1, 1, 1, 1} << 5 << 2;
        QTest::addRow("a batch overflows") << QList<int>{3, 4} << 5 << 2;
        QTest::addRow("a batch larger than the log") << QList<int>{2, 8} << 5 << 5;
    }
    void eventLogIsBounded()
    {
        QFETCH(QList<int>, batches);
        QFETCH(int, rows);
        QFETCH(int, dropped);
        Log model(5);
        QAbstractItemModelTester tester(&model, QtTestMode);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        int step = 0;
        for (int size : batches) {
            QVector<Event> batch;
            for (int k = 0; k < size; ++k)
                batch.append(Event{EventKind::Info, step++, -1, "event"});
            size == 1 ? model.append(batch.first()) : model.append(batch);
        }
        QCOMPARE(model.rowCount(), rows);
        QCOMPARE(model.droppedCount(), std::int64_t(dropped));
        QCOMPARE(inserted.count(), batches.size());  // one insertion per batch
        for (const QList<QVariant> &args : removed)  // always the oldest rows
            QCOMPARE(args.at(1).toInt(), 0);
        QCOMPARE(model.index(0, 0).data(Log::StepRole).toInt(), step - rows);  // the newest remain
        QCOMPARE(model.index(rows - 1, 0).data(Log::StepRole).toInt(), step - 1);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.droppedCount(), std::int64_t(0));
    }

    void eventColoursAndNames_data()
    {
        QTest::addColumn<EventKind>("kind");
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("minHue");  // -1: the view's default colour
        QTest::addColumn<int>("maxHue");
        QTest::addRow("error is red") << EventKind::Error << "error" << 0 << 10;
        QTest::addRow("first non-finite is red") << EventKind::FirstNonFinite << "first non-finite" << 0 << 10;
        QTest::addRow("recovery is orange") << EventKind::Recovery << "recovery" << 20 << 40;
        QTest::addRow("rollback is orange") << EventKind::Rollback << "rollback" << 20 << 40;
        QTest::addRow("control change is blue") << EventKind::ControlChange << "control change" << 200 << 240;
        QTest::addRow("info keeps the default") << EventKind::Info << "info" << -1 << -1;
    }
    void eventColoursAndNames()
    {
        QFETCH(EventKind, kind);
        QFETCH(QString, name);
        QFETCH(int, minHue);
        QFETCH(int, maxHue);
        Log model;
        QAbstractItemModelTester tester(&model, QtTestMode);
        model.append(Event{kind, 3, -1, "x"});
        QCOMPARE(model.index(0, Log::KindColumn).data().toString(), name);
        QCOMPARE(model.index(0, 0).data(Log::KindRole).toInt(), int(kind));
        const QVariant fg = model.index(0, Log::MessageColumn).data(Qt::ForegroundRole);
        QCOMPARE(fg.isValid(), minHue >= 0);
        if (minHue >= 0) {
            const int hue = qvariant_cast<QBrush>(fg).color().hue();
            QVERIFY2(hue >= minHue && hue <= maxHue, qPrintable(QString::number(hue)));
        }
    }

    void eventLayersAndRoles()
    {
        Log model;
        QAbstractItemModelTester tester(&model, QtTestMode);
        model.append({Event{EventKind::FirstNonFinite, 8, 4, "NaN born in block.conv"},
                      Event{EventKind::Info, -1, 0, "run"}, Event{EventKind::Paused, 9, -1, "paused"}});
        QCOMPARE(model.index(0, Log::LayerColumn).data().toString(), u"#4"_s);  // layers not known yet
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.setLayers(sampleLayers());
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.index(0, Log::LayerColumn).data().toString(), u"block.conv"_s);
        QCOMPARE(model.index(1, Log::LayerColumn).data().toString(), u"Net"_s);  // the root, by type
        QCOMPARE(model.index(2, Log::LayerColumn).data().toString(), QString());
        QCOMPARE(model.index(0, Log::StepColumn).data().toInt(), 8);
        QCOMPARE(model.index(1, Log::StepColumn).data().toString(), QString());
        QCOMPARE(model.index(1, 0).data(Log::StepRole).toInt(), -1);
        QCOMPARE(model.index(0, 0).data(Log::LayerIdRole).toInt(), 4);
        QCOMPARE(model.index(0, Log::MessageColumn).data().toString(), u"NaN born in block.conv"_s);
        QCOMPARE(model.headerData(Log::LayerColumn, Qt::Horizontal).toString(), u"Layer"_s);
    }
};

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    TestModels t;
    return QTest::qExec(&t, argc, argv);
}
#include "tst_models.moc"
