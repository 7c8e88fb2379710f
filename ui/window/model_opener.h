#pragma once
// Opening a user's TorchScript file in the window (File > Open model, or a .pt dropped on it): a
// quick load that guesses the input shape and says plainly why a file cannot be used, then the
// input dialog. The dialog is window-modal but does not block: a run keeps streaming meanwhile.
#include "widgets/input_shape_dialog.h"

#include <QObject>
#include <QString>

class QMimeData;
class QWidget;

namespace nanscope {

struct ModelFileCheck {
    QString error;  // empty when the file loads as a TorchScript model
    std::vector<std::int64_t> guessedShape;
    bool guessedTokenIds = false;         // the model starts with an nn.Embedding
    QString guessNote;                    // where the guess comes from, or why there is none
    std::vector<std::string> inputNames;  // forward's arguments after self
    std::size_t requiredInputs = 1;
};

// Loads `path` once, on the calling thread (a ResNet-18-sized file takes well under a second).
ModelFileCheck checkModelFile(const QString &path);

// The one local TorchScript file (.pt, .pth, .ts, .zip, .ptl) in a drag, or empty.
QString modelPathIn(const QMimeData *mime);

// The lesson pane's page for a model: what was loaded and how NaNScope will feed it.
QString modelPageMarkdown(const QString &path, const ModelInputChoice &input, const QString &guessNote);

class ModelOpener final : public QObject {
    Q_OBJECT
public:
    explicit ModelOpener(QWidget *window);

    void browse();                   // a file dialog, then open()
    void open(const QString &path);  // probe, then the input dialog
    InputShapeDialog *pendingDialog() const { return dialog_; }

Q_SIGNALS:
    void chosen(const QString &path, const nanscope::ModelInputChoice &input, const QString &guessNote);
    void failed(const QString &message);

private:
    QWidget *window_;
    InputShapeDialog *dialog_ = nullptr;
    QString lastDirectory_;
};

}  // namespace nanscope
