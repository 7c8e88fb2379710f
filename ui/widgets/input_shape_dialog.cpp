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

QString describeModelInput(const ModelInputChoice &input)
{
    QString data = input.shape.empty()
                       ? QObject::tr("inputs %1").arg(QFileInfo(input.inputsPath).fileName()) +
                             (input.targetsPath.isEmpty()
                                  ? QString()
                                  : QObject::tr(", targets %1").arg(QFileInfo(input.targetsPath).fileName()))
                       : QObject::tr("synthetic %1").arg(QString::fromStdString(formatInputShape(input.shape))) +
                             (input.tokenIds ? QObject::tr(" token ids") : QString());
    for (const SideInput &side : input.sideInputs)
        data += QStringLiteral(" + ") + QString::fromStdString(formatShapedInput({side.shape, side.dtype}));
    if (!input.output.isEmpty())
        data += QObject::tr(", output %1").arg(input.output);
    return data + QStringLiteral(", ") + input.loss;
}

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

// "8x4:bool; 8:int64": the further inputs, or empty on a mistake.
std::optional<std::vector<SideInput>> parseSideInputs(const QString &text)
{
    std::vector<SideInput> out;
    for (const QString &part : text.split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        if (part.trimmed().isEmpty())
            continue;
        const auto parsed = parseShapedInput(part.toStdString());
        if (!parsed)
            return std::nullopt;
        out.push_back(SideInput{parsed->shape, parsed->dtype, {}});
    }
    return out;
}

}  // namespace

InputShapeDialog::InputShapeDialog(const QString &modelPath, const std::vector<std::int64_t> &guess,
                                   const QString &guessNote, bool guessTokenIds, QWidget *parent,
                                   const std::vector<std::string> &inputNames, std::size_t requiredInputs)
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
    loss_->addItem(tr("the model's own loss (its output is a scalar)"), QStringLiteral("model"));
    side_ = new QLineEdit;
    side_->setObjectName(QStringLiteral("furtherInputs"));
    output_ = new QLineEdit;
    output_->setPlaceholderText(tr("the first tensor it returns"));
    output_->setToolTip(tr("For a model that returns a tuple, list or dict: the position or key of the output "
                           "the loss is taken on"));
    form->addRow(synthetic_, shape_);
    form->addRow(tokenIds_, vocab_);
    furtherAllowed_ = inputNames.size() > 1 ? inputNames.size() - 1 : 0;
    furtherRequired_ = requiredInputs > 1 ? requiredInputs - 1 : 0;
    if (furtherAllowed_ > 0) {
        QStringList names;
        for (std::size_t i = 1; i < inputNames.size(); ++i)
            names << QString::fromStdString(inputNames[i]);
        QStringList guesses;  // the data's shape for each required one: a mask often has it
        for (std::size_t i = 0; i < furtherRequired_ && !guess.empty(); ++i)
            guesses << QString::fromStdString(formatShapedInput({guess, guessTokenIds ? "int64" : "float32"}));
        side_->setText(guesses.join(QStringLiteral("; ")));
        side_->setPlaceholderText(tr("one shape each, separated by ;  e.g. 8x32:bool"));
        side_->setToolTip(tr("Synthetic float32 N(0,1), int64 ids below the vocabulary, or bool all false "
                             "(nothing masked). A file of inputs may instead hold a tuple or dict of all of them."));
        form->addRow(tr("Further inputs (%1)").arg(names.join(QStringLiteral(", "))), side_);
    } else {
        side_->hide();
    }
    auto *note = new QLabel(guessNote);
    note->setWordWrap(true);
    note->setEnabled(false);
    form->addRow(QString(), note);
    form->addRow(files_, fileRow(inputs_, tr("Input tensors"), this));
    form->addRow(tr("Targets"), fileRow(targets_, tr("Target tensors"), this));
    form->addRow(tr("Loss"), loss_);
    form->addRow(tr("Output"), output_);
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
    for (QLineEdit *e : {shape_, side_, inputs_, targets_})
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
        const auto shape = parseInputShape(shape_->text().toStdString());
        const auto side = parseSideInputs(side_->text());
        if (!shape) {
            problem = tr("Write the input shape as positive integers separated by x, the batch first: 8x3x64x64.");
        } else if (furtherAllowed_ > 0 && !side) {
            problem = tr("Write each further input's shape like the first, with :int64 or :bool after it for "
                         "ids or masks, separated by ;");
        } else if (furtherAllowed_ > 0 && (side->size() < furtherRequired_ || side->size() > furtherAllowed_)) {
            problem = tr("The model's forward takes %n further input(s) here.", "", int(furtherRequired_));
        } else if (furtherAllowed_ > 0) {
            for (const SideInput &in : *side)
                if (in.shape.front() != shape->front())
                    problem = tr("Each further input's first size is the batch, %1.").arg(shape->front());
        }
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
        if (furtherAllowed_ > 0)
            c.sideInputs = parseSideInputs(side_->text()).value_or(std::vector<SideInput>{});
    } else {
        c.inputsPath = inputs_->text();
        c.targetsPath = targets_->text();
    }
    c.loss = loss_->currentData().toString();
    c.output = output_->text().trimmed();
    return c;
}

}  // namespace nanscope
