// A user's TorchScript file in the window: dropped or opened, its input shape guessed and
// confirmed, trained with its own module paths in the tree and the map, and every kind of bad
// file answered with a message that names it while the window keeps working.
#include "live_session.h"
#include "nanscope/input_shape.h"
#include "widgets/control_panel.h"
#include "models/event_log_model.h"
#include "widgets/input_shape_dialog.h"
#include "models/layer_tree_model.h"
#include "widgets/lesson_pane.h"
#include "window/main_window.h"
#include "window/model_opener.h"
#include "widgets/nan_map_view.h"
#include "torchscript_fixtures.h"

#include <QMessageBox>
#include <QMimeData>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QLineEdit>
#include <QtTest>

using namespace nanscope;

namespace {

// Sends a drag-enter and, when it was accepted, a drop of `path`; returns whether it was accepted.
bool dropFile(QWidget *target, const QString &path)
{
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    QDragEnterEvent enter(QPoint(20, 20), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    enter.setAccepted(false);
    QApplication::sendEvent(target, &enter);
    if (!enter.isAccepted())
        return false;
    QDropEvent drop(QPointF(20, 20), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    return true;
}

QStringList eventTexts(const EventLogModel *model)
{
    QStringList texts;
    for (int row = 0; row < model->rowCount(); ++row)
        texts << model->index(row, EventLogModel::MessageColumn).data().toString();
    return texts;
}

}  // namespace

class TestModelWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void droppedModelRunsAndNamesTheOriginByItsOwnPaths();
    void badFilesAreNamedAndTheWindowWorksOn_data();
    void badFilesAreNamedAndTheWindowWorksOn();
    void onlyModelFilesAreAcceptedAsDrops();
    void weightsNonFiniteAsLoadedAreReported();
    void aWrongInputShapeFailsTheRunWithAMessage();
    void aModelOfTokenIdsIsOfferedIdsAndRunsOnThem();
    void aModelOfTwoInputsIsAskedForBoth();
    void parsesInputShapes_data();
    void parsesInputShapes();

private:
    QTemporaryDir dir_;
    QString path(const QString &name) const { return dir_.filePath(name); }
};

void TestModelWindow::initTestCase()
{
    QVERIFY(dir_.isValid());
    fixtures::writeModel("forward-nan", path(QStringLiteral("forward-nan.pt")).toStdString());
    fixtures::writeModel("nested", path(QStringLiteral("nested.pt")).toStdString());
    fixtures::writeModel("bad-weights", path(QStringLiteral("bad-weights.pt")).toStdString());
    fixtures::writeModel("token-lm", path(QStringLiteral("token-lm.pt")).toStdString());
    fixtures::writeModel("two-inputs", path(QStringLiteral("two-inputs.pt")).toStdString());
}

// A model that starts with an Embedding: the dialog offers integer ids of a guessed shape, and the
// run trains on them (its loss starts near ln 50 with the next tokens as targets).
void TestModelWindow::aModelOfTokenIdsIsOfferedIdsAndRunsOnThem()
{
    MainWindow w(newLiveSession);
    w.show();
    w.openModel(path(QStringLiteral("token-lm.pt")));
    QTRY_VERIFY(w.modelOpener()->pendingDialog());
    InputShapeDialog *dialog = w.modelOpener()->pendingDialog();
    const ModelInputChoice choice = dialog->choice();
    QCOMPARE(formatInputShape(choice.shape), std::string("8x32"));
    QVERIFY(choice.tokenIds);
    QCOMPARE(choice.vocab, std::int64_t(0));  // the Embedding's own size
    dialog->accept();
    const RunConfig config = w.controlPanel()->runConfig();
    QVERIFY(config.tokenIds);
    QVERIFY(w.lessonPane()->toPlainText().contains(QLatin1String("synthetic 8x32 token ids")));
    w.controlPanel()->setSteps(3);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    QVERIFY2(w.controller().lastSummary().error.empty(), w.controller().lastSummary().error.c_str());
    QCOMPARE(w.recordsShown(), 3);
    const double firstLoss = w.store().series(Series::Loss).buckets().front().max;
    QVERIFY2(firstLoss > 3.0 && firstLoss < 5.0, qPrintable(QString::number(firstLoss)));
}

// forward(x, mask): the dialog asks for the mask too, pre-filled with the data's shape; the user
// makes it bool and the run trains on both.
void TestModelWindow::aModelOfTwoInputsIsAskedForBoth()
{
    MainWindow w(newLiveSession);
    w.show();
    w.openModel(path(QStringLiteral("two-inputs.pt")));
    QTRY_VERIFY(w.modelOpener()->pendingDialog());
    InputShapeDialog *dialog = w.modelOpener()->pendingDialog();
    auto *further = dialog->findChild<QLineEdit *>(QStringLiteral("furtherInputs"));
    QVERIFY(further && further->isVisibleTo(dialog));
    QCOMPARE(further->text(), QStringLiteral("8x4"));
    further->setText(QStringLiteral("8x4:bool"));
    const ModelInputChoice choice = dialog->choice();
    QCOMPARE(int(choice.sideInputs.size()), 1);
    QCOMPARE(choice.sideInputs[0].dtype, std::string("bool"));
    dialog->accept();
    const RunConfig config = w.controlPanel()->runConfig();
    QCOMPARE(config.sideInputs, choice.sideInputs);
    QVERIFY(w.lessonPane()->toPlainText().contains(QLatin1String("synthetic 8x4 + 8x4:bool")));
    w.controlPanel()->setSteps(3);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    QVERIFY2(w.controller().lastSummary().error.empty(), w.controller().lastSummary().error.c_str());
    QCOMPARE(w.recordsShown(), 3);
}

void TestModelWindow::droppedModelRunsAndNamesTheOriginByItsOwnPaths()
{
    MainWindow w(newLiveSession);
    w.show();
    const QString file = path(QStringLiteral("forward-nan.pt"));
    QVERIFY(dropFile(&w, file));
    QTRY_VERIFY(w.modelOpener()->pendingDialog());  // opened after the drop returned
    InputShapeDialog *dialog = w.modelOpener()->pendingDialog();
    // The shape is guessed from the first linear layer (4 features), the batch is 8.
    QCOMPARE(formatInputShape(dialog->choice().shape), std::string("8x4"));
    dialog->accept();

    ControlPanel *controls = w.controlPanel();
    QVERIFY(controls->modelSelected());
    const RunConfig config = controls->runConfig();
    QCOMPARE(QString::fromStdString(config.modelPath), file);
    QCOMPARE(config.inputShape, (std::vector<std::int64_t>{8, 4}));
    QCOMPARE(config.loss, std::string("cross-entropy"));
    QVERIFY(w.lessonPane()->toPlainText().contains(QLatin1String("forward-nan.pt")));
    QVERIFY(w.lessonPane()->toPlainText().contains(QLatin1String("synthetic 8x4")));

    controls->setSteps(6);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    QCOMPARE(w.recordsShown(), 6);
    // NaN is born in forward at the first step, in logp's torch.log of negative values.
    QVERIFY2(w.originText().contains(QLatin1String("Step 0")), qPrintable(w.originText()));
    QVERIFY(w.originText().contains(QLatin1String("logp")));
    QVERIFY(w.originText().contains(QLatin1String("aten::log")));
    const QModelIndexList logp = w.layerModel()->match(w.layerModel()->index(0, 0), Qt::DisplayRole,
                                                       QStringLiteral("logp"), 1, Qt::MatchRecursive);
    QCOMPARE(logp.size(), 1);
    const int layer = w.layerModel()->layerAt(logp.first());
    QCOMPARE(w.layerModel()->indexForLayer(layer, LayerTreeModel::StatusColumn).data().toString(),
             QStringLiteral("born here at step 0"));
    QCOMPARE(w.nanMap()->columnCount(), 6);
    int originLayer = -1, originStep = -1;
    QVERIFY(w.nanMap()->originOutlined(&originLayer, &originStep));
    QCOMPARE(originLayer, layer);
    QCOMPARE(originStep, 0);

    // A second file replaces the first in the picker; a scenario can still be picked after it.
    QVERIFY(dropFile(&w, path(QStringLiteral("nested.pt"))));
    QTRY_VERIFY(w.modelOpener()->pendingDialog());
    w.modelOpener()->pendingDialog()->accept();
    QCOMPARE(QString::fromStdString(controls->runConfig().modelPath), path(QStringLiteral("nested.pt")));
    w.selectScenario(QStringLiteral("log-zero"));
    QVERIFY(!controls->modelSelected());
    QVERIFY(controls->runConfig().modelPath.empty());
}

void TestModelWindow::badFilesAreNamedAndTheWindowWorksOn_data()
{
    QTest::addColumn<QString>("kind");
    for (const char *kind : {"missing", "empty", "truncated", "not-zip", "random"})
        QTest::newRow(kind) << QString::fromLatin1(kind);
}

void TestModelWindow::badFilesAreNamedAndTheWindowWorksOn()
{
    QFETCH(QString, kind);
    const QString file = path(kind + QStringLiteral(".pt"));
    if (kind != QLatin1String("missing"))
        fixtures::writeBadFile(kind.toStdString(), file.toStdString());
    const ModelFileCheck check = checkModelFile(file);
    QVERIFY2(check.error.contains(QFileInfo(file).fileName()), qPrintable(check.error));
    QVERIFY(!check.error.contains(QLatin1Char('\n')));

    MainWindow w(newLiveSession);
    QSignalSpy failed(w.modelOpener(), &ModelOpener::failed);
    w.openModel(file);
    QCOMPARE(failed.size(), 1);
    QVERIFY(!w.modelOpener()->pendingDialog());
    QVERIFY(!w.controlPanel()->modelSelected());
    QVERIFY(eventTexts(w.eventModel()).join(QLatin1Char('\n')).contains(QFileInfo(file).fileName()));
    auto *box = w.findChild<QMessageBox *>();
    QVERIFY(box && box->isVisible());  // window-modal, not blocking
    box->accept();
    // And the window still trains a scenario.
    QSignalSpy ended(&w, &MainWindow::runEnded);
    w.selectScenario(QStringLiteral("large-lr-ce"));
    w.setSteps(3);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    QCOMPARE(w.recordsShown(), 3);
}

void TestModelWindow::onlyModelFilesAreAcceptedAsDrops()
{
    MainWindow w(newLiveSession);
    QVERIFY(!dropFile(&w, path(QStringLiteral("notes.txt"))));
    QVERIFY(dropFile(&w, path(QStringLiteral("weights.PTH"))));  // accepted by name; the probe judges it
    QMimeData two;
    two.setUrls({QUrl::fromLocalFile(path(QStringLiteral("a.pt"))), QUrl::fromLocalFile(path(QStringLiteral("b.pt")))});
    QVERIFY(modelPathIn(&two).isEmpty());
    QMimeData remote;
    remote.setUrls({QUrl(QStringLiteral("https://example.org/model.pt"))});
    QVERIFY(modelPathIn(&remote).isEmpty());
}

void TestModelWindow::weightsNonFiniteAsLoadedAreReported()
{
    MainWindow w(newLiveSession);
    ModelInputChoice input;
    input.shape = {4, 4};
    w.controlPanel()->setModel(path(QStringLiteral("bad-weights.pt")), input);
    w.setSteps(2);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    const QString log = eventTexts(w.eventModel()).join(QLatin1Char('\n'));
    QVERIFY2(log.contains(QLatin1String("parameter fc.weight holds 2 NaN, 1 +Inf")), qPrintable(log));
    QVERIFY2(log.contains(QLatin1String("buffer stats holds 0 NaN, 0 +Inf, 1 -Inf")), qPrintable(log));
}

void TestModelWindow::aWrongInputShapeFailsTheRunWithAMessage()
{
    MainWindow w(newLiveSession);
    ModelInputChoice input;
    input.shape = {8, 7};  // the model takes 4 features
    w.controlPanel()->setModel(path(QStringLiteral("forward-nan.pt")), input);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    QCOMPARE(w.recordsShown(), 0);
    auto *box = w.findChild<QMessageBox *>();
    QVERIFY(box);
    QVERIFY2(box->text().startsWith(QLatin1String("the model rejected an input of shape 8x7 (its first weighted layer "
                                                  "'fc' takes inputs whose last dimension is 4): ")),
             qPrintable(box->text()));
    QVERIFY(!box->text().contains(QLatin1Char('\n')));
    box->accept();
    // Fixed in place, the same model runs.
    input.shape = {8, 4};
    w.controlPanel()->setModel(path(QStringLiteral("forward-nan.pt")), input);
    w.setSteps(2);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    QCOMPARE(w.recordsShown(), 2);
}

// What the input-shape dialog's field accepts, and how it writes a shape back.
void TestModelWindow::parsesInputShapes_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("shape");  // formatted back, empty when rejected
    QTest::addRow("x-separated") << QStringLiteral("8x3x64x64") << QStringLiteral("8x3x64x64");
    QTest::addRow("commas and spaces") << QStringLiteral(" 8, 100 ") << QStringLiteral("8x100");
    QTest::addRow("times sign") << QStringLiteral("4×10") << QStringLiteral("4x10");
    QTest::addRow("one dimension") << QStringLiteral("32") << QStringLiteral("32");
    QTest::addRow("zero") << QStringLiteral("8x0") << QString();
    QTest::addRow("negative") << QStringLiteral("8x-3") << QString();
    QTest::addRow("letters") << QStringLiteral("8xabc") << QString();
    QTest::addRow("empty") << QString() << QString();
}

void TestModelWindow::parsesInputShapes()
{
    QFETCH(QString, text);
    QFETCH(QString, shape);
    const auto parsed = parseInputShape(text.toStdString());
    QCOMPARE(parsed ? QString::fromStdString(formatInputShape(*parsed)) : QString(), shape);
}

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    TestModelWindow t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_model_window.moc"
