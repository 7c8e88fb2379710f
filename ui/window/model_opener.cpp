#include "window/model_opener.h"

#include "nanscope/input_shape.h"
#include "nanscope/inspect.h"

#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QMimeData>
#include <QUrl>

namespace nanscope {

ModelFileCheck checkModelFile(const QString &path)
{
    ModelFileCheck check;
    const QFileInfo info(path);
    if (!info.exists()) {
        check.error = QObject::tr("%1 does not exist.").arg(path);
        return check;
    }
    if (!info.isFile()) {
        check.error = QObject::tr("%1 is not a file.").arg(path);
        return check;
    }
    try {
        const InputGuess guess = guessInputShape(path.toStdString());
        check.guessedShape = guess.shape;
        check.guessedTokenIds = guess.tokenIds;
        check.guessNote = QString::fromStdString(guess.note);
        check.inputNames = guess.inputNames;
        check.requiredInputs = guess.requiredInputs;
    } catch (const std::exception &e) {
        // The core's messages name the file and the cause on their first line.
        const std::string what = e.what();
        check.error = QString::fromStdString(what.substr(0, what.find('\n')));
    }
    return check;
}

QString modelPathIn(const QMimeData *mime)
{
    if (!mime || !mime->hasUrls() || mime->urls().size() != 1)
        return {};
    const QUrl url = mime->urls().constFirst();
    if (!url.isLocalFile())
        return {};
    const QString path = url.toLocalFile();
    static const QStringList suffixes{QStringLiteral("pt"), QStringLiteral("pth"), QStringLiteral("ts"),
                                      QStringLiteral("zip"), QStringLiteral("ptl")};
    return suffixes.contains(QFileInfo(path).suffix().toLower()) ? path : QString();
}

QString modelPageMarkdown(const QString &path, const ModelInputChoice &input, const QString &guessNote)
{
    const QString name = QFileInfo(path).fileName();
    QString page = QObject::tr("# Your model: %1\n\n`%2`\n\n").arg(name, path);
    page += QObject::tr("**Inputs:** %1.").arg(describeModelInput(input));
    if (!input.shape.empty() && !guessNote.isEmpty())
        page += QObject::tr(" The suggested shape came %1.").arg(guessNote);
    page += QObject::tr(
        "\n\n## What NaNScope does with it\n\n"
        "Every module reports, at every step, the health of its output in forward and of the gradient "
        "flowing into that output in backward, under the dotted path `named_modules()` gives it. "
        "Parameters and buffers that already hold NaN or Inf when the file is loaded are reported by name "
        "in the event log at the start of the run.\n\n"
        "## What to try\n\n"
        "- Start with the recovery policy off and *Pause on non-finite* on: the run stops before the update "
        "that would spread the first NaN into the weights, and the origin panel names the layer and the op.\n"
        "- A layer marked *born here* had finite inputs and a non-finite output: look there first. "
        "*Passed on* means it only carried a value born earlier; *weights non-finite*, that an update "
        "made its parameters NaN or Inf.\n"
        "- Lower the learning rate, turn on gradient clipping or switch the precision while paused, then "
        "*Retry* the same step to see whether the change fixes it.\n");
    return page;
}

ModelOpener::ModelOpener(QWidget *window) : QObject(window), window_(window) {}

void ModelOpener::browse()
{
    const QString path =
        QFileDialog::getOpenFileName(window_, tr("Open a TorchScript model"), lastDirectory_,
                                     tr("TorchScript models (*.pt *.pth *.ts *.zip *.ptl);;All files (*)"));
    if (!path.isEmpty())
        open(path);
}

void ModelOpener::open(const QString &path)
{
    lastDirectory_ = QFileInfo(path).absolutePath();
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const ModelFileCheck check = checkModelFile(path);
    QApplication::restoreOverrideCursor();
    if (!check.error.isEmpty()) {
        Q_EMIT failed(check.error);
        return;
    }
    if (dialog_)
        dialog_->reject();  // a second file dropped while the first one's dialog is open replaces it
    dialog_ = new InputShapeDialog(path, check.guessedShape, check.guessNote, check.guessedTokenIds, window_,
                                   check.inputNames, check.requiredInputs);
    dialog_->setAttribute(Qt::WA_DeleteOnClose);
    InputShapeDialog *dialog = dialog_;
    connect(dialog, &QDialog::accepted, this,
            [this, dialog, path, note = check.guessNote] { Q_EMIT chosen(path, dialog->choice(), note); });
    connect(dialog, &QDialog::finished, this, [this, dialog] {  // before deleteLater gets to it
        if (dialog_ == dialog)
            dialog_ = nullptr;
    });
    dialog->open();
}

}  // namespace nanscope
