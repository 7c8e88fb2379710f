#include "widgets/input_shape_dialog.h"

#include "nanscope/input_shape.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace nanscope {

namespace {

QWidget *fileRow(QLineEdit *edit, const QString &title, QWidget *parent)
{
    auto *row = new QWidget(parent);
    auto *layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *browse = new QPushButton(QObject::tr("Browse…"), row);
    layout->addWidget(edit, 1);
    layout->addWidget(browse);
    QObject::connect(browse, &QPushButton::clicked, edit, [edit, title, parent] {
        const QString path = QFileDialog::getOpenFileName(parent, title, edit->text(),
                                                          QObject::tr("Tensors (*.pt *.pth);;All files (*)"));
        if (!path.isEmpty())
            edit->setText(path);
    });
    return row;
}

}  // namespace

InputShapeDialog::InputShapeDialog(const QString &modelPath, const std::vector<std::int64_t> &guess,
                                   const QString &guessNote, bool guessTokenIds, QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Inputs for %1").arg(QFileInfo(modelPath).fileName()));
    auto *layout = new QVBoxLayout(this);
    auto *form = new QFormLayout;
    synthetic_ = new QRadioButton(tr("Synthetic inputs of shape"));
    files_ = new QRadioButton(tr("Inputs from a file"));
    shape_ = new QLineEdit(guess.empty() ? QString() : QString::fromStdString(formatInputShape(guess)));
    shape_->setPlaceholderText(tr("batch x features…, e.g. 8x3x64x64"));
    tokenIds_ = new QCheckBox(tr("Integer token ids, below"));
    tokenIds_->setToolTip(tr("For a model that starts with an nn.Embedding: random ids in [0, vocabulary)"));
    tokenIds_->setChecked(guessTokenIds);
    vocab_ = new QSpinBox;
    vocab_->setRange(0, 100000000);
    vocab_->setSpecialValueText(tr("the Embedding's size"));
    vocab_->setEnabled(guessTokenIds);
    inputs_ = new QLineEdit;
    targets_ = new QLineEdit;
    targets_->setPlaceholderText(tr("optional: inferred from the output's shape"));
    loss_ = new QComboBox;
    loss_->addItem(tr("cross-entropy over the last dimension"), QStringLiteral("cross-entropy"));
    loss_->addItem(tr("mean squared error (regression)"), QStringLiteral("mse"));
    form->addRow(synthetic_, shape_);
    form->addRow(tokenIds_, vocab_);
    auto *note = new QLabel(guessNote);
    note->setWordWrap(true);
    note->setEnabled(false);
    form->addRow(QString(), note);
    form->addRow(files_, fileRow(inputs_, tr("Input tensors"), this));
    form->addRow(tr("Targets"), fileRow(targets_, tr("Target tensors"), this));
    form->addRow(tr("Loss"), loss_);
    layout->addLayout(form);
    problem_ = new QLabel;
    problem_->setStyleSheet(QStringLiteral("color: #b00000"));
    problem_->setWordWrap(true);
    layout->addWidget(problem_);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    ok_ = buttons->button(QDialogButtonBox::Ok);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    synthetic_->setChecked(true);
    for (QLineEdit *e : {shape_, inputs_, targets_})
        connect(e, &QLineEdit::textChanged, this, &InputShapeDialog::validate);
    connect(synthetic_, &QRadioButton::toggled, this, &InputShapeDialog::validate);
    connect(tokenIds_, &QCheckBox::toggled, vocab_, &QWidget::setEnabled);
    connect(shape_, &QLineEdit::textEdited, this, [this] { synthetic_->setChecked(true); });
    connect(inputs_, &QLineEdit::textChanged, this, [this] { files_->setChecked(true); });
    validate();
}

void InputShapeDialog::validate()
{
    QString problem;
    if (synthetic_->isChecked()) {
        if (!parseInputShape(shape_->text().toStdString()))
            problem = tr("Write the input shape as positive integers separated by x, the batch first: 8x3x64x64.");
    } else if (inputs_->text().isEmpty()) {
        problem = tr("Choose a file of input tensors (torch.save in Python, or torch::save in C++).");
    } else if (!QFileInfo(inputs_->text()).isFile()) {
        problem = tr("%1 is not a file.").arg(inputs_->text());
    } else if (!targets_->text().isEmpty() && !QFileInfo(targets_->text()).isFile()) {
        problem = tr("%1 is not a file.").arg(targets_->text());
    }
    problem_->setText(problem);
    ok_->setEnabled(problem.isEmpty());
}

ModelInputChoice InputShapeDialog::choice() const
{
    ModelInputChoice c;
    if (synthetic_->isChecked()) {
        c.shape = parseInputShape(shape_->text().toStdString()).value_or(std::vector<std::int64_t>{});
        c.tokenIds = tokenIds_->isChecked();
        c.vocab = c.tokenIds ? vocab_->value() : 0;
    } else {
        c.inputsPath = inputs_->text();
        c.targetsPath = targets_->text();
    }
    c.loss = loss_->currentData().toString();
    return c;
}

}  // namespace nanscope
