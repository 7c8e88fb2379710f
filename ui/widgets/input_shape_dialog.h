#pragma once
// Asks how to feed a TorchScript model: a synthetic input shape ("8x3x64x64", the first number is
// the batch), pre-filled with a guess where one can be made, or tensor files; and the loss.
#include <QDialog>

#include "nanscope/run_config.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;

namespace nanscope {

struct ModelInputChoice {
    std::vector<std::int64_t> shape;  // empty when files are used
    bool tokenIds = false;            // synthetic integer ids in [0, vocab) instead of floats
    std::int64_t vocab = 0;           // 0: the model's first nn.Embedding says
    QString inputsPath;
    QString targetsPath;
    QString loss = QStringLiteral("cross-entropy");
    std::vector<SideInput> sideInputs;  // synthetic further inputs of forward (a file may hold them all)
    QString output;                     // the output trained on: a position or key; empty: the first tensor
};

// "synthetic 8x3x64x64, cross-entropy" or "inputs x.pt, targets y.pt, mse".
QString describeModelInput(const ModelInputChoice &input);

class InputShapeDialog final : public QDialog {
    Q_OBJECT
public:
    // `inputNames`: forward's arguments after self; with more than one, the dialog asks for a
    // shape of each further one (the first `requiredInputs` pre-filled).
    InputShapeDialog(const QString &modelPath, const std::vector<std::int64_t> &guess, const QString &guessNote,
                     bool guessTokenIds = false, QWidget *parent = nullptr,
                     const std::vector<std::string> &inputNames = {}, std::size_t requiredInputs = 1);
    ModelInputChoice choice() const;

private:
    void validate();

    QRadioButton *synthetic_ = nullptr;
    QRadioButton *files_ = nullptr;
    QLineEdit *shape_ = nullptr;
    QCheckBox *tokenIds_ = nullptr;
    QSpinBox *vocab_ = nullptr;
    QLineEdit *side_ = nullptr;  // "8x4:bool; 8:int64", one per further input
    QLineEdit *output_ = nullptr;
    std::size_t furtherRequired_ = 0, furtherAllowed_ = 0;
    QLineEdit *inputs_ = nullptr;
    QLineEdit *targets_ = nullptr;
    QComboBox *loss_ = nullptr;
    QLabel *problem_ = nullptr;
    QPushButton *ok_ = nullptr;
};

}  // namespace nanscope
