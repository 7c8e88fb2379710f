// The origin of a non-finite value in words, in the window's language: the origin panel's
// headline and sentence, and the event log's first-non-finite and paused messages.
#include "models/origin_text.h"

namespace nanscope {

QString phaseText(Phase phase)
{
    switch (phase) {
    case Phase::None: return OriginText::tr("none");
    case Phase::Input: return OriginText::tr("input");
    case Phase::Forward: return OriginText::tr("forward");
    case Phase::Loss: return OriginText::tr("loss");
    case Phase::Backward: return OriginText::tr("backward");
    case Phase::Parameter: return OriginText::tr("parameter");
    case Phase::Update: return OriginText::tr("update");
    }
    return {};
}

namespace {

const char *const kInputSentence = QT_TRANSLATE_NOOP(
    "OriginText", "The input batch holds NaN or Inf values; every layer downstream only passes them on.");

}  // namespace

QString explainOrigin(const Origin &o)
{
    // Untranslated, the core's own sentence says more (the input's counts, its samples).
    const bool translated = OriginText::tr(kInputSentence) != QLatin1String(kInputSentence);
    if (!translated && !o.explanation.empty())
        return QString::fromStdString(o.explanation);
    const QString layer = QString::fromStdString(o.layerPath);
    QString s;
    switch (o.phase) {
    case Phase::None: return {};
    case Phase::Input: return OriginText::tr(kInputSentence);
    case Phase::Forward:
        if (layer.isEmpty())
            s = o.produced ? OriginText::tr("The model's own forward (outside its modules) made a non-finite value")
                           : OriginText::tr("The model's own forward received non-finite inputs");
        else
            s = o.produced ? OriginText::tr("Layer '%1' turned finite inputs into non-finite outputs").arg(layer)
                           : OriginText::tr("Layer '%1' received non-finite inputs").arg(layer);
        break;
    case Phase::Loss: s = OriginText::tr("The model's outputs are finite but the loss is not"); break;
    case Phase::Backward:
        s = o.layer < 0         ? OriginText::tr("The forward pass is finite; the backward pass of the loss made a "
                                                  "non-finite gradient")
            : layer.isEmpty()   ? OriginText::tr("The forward pass is finite; the backward pass of the model's own "
                                                  "forward made a non-finite gradient")
                                : OriginText::tr("The forward pass is finite; the backward pass of layer '%1' made a "
                                                  "non-finite gradient")
                                    .arg(layer);
        break;
    case Phase::Parameter:
        s = OriginText::tr("The parameters of layer '%1' were already non-finite before this step").arg(layer);
        break;
    case Phase::Update:
        s = OriginText::tr("The optimizer update of the previous step made the parameters of layer '%1' non-finite")
                .arg(layer);
        break;
    }
    if (o.calls > 1 && (o.phase == Phase::Forward || o.phase == Phase::Backward))
        s += OriginText::tr(" in call %1 of %2").arg(o.call).arg(o.calls);
    if (!o.op.empty())
        s += OriginText::tr(" (first op: %1)").arg(QString::fromStdString(o.op));
    s += OriginText::tr(".");
    // How the kind that escaped was made, in the ops' own words with their source lines.
    if (const QString chain = QString::fromStdString(o.chain); chain.contains(QLatin1String(" became ")))
        s += QLatin1Char(' ') + chain;
    return s;
}

QString describeOrigin(const Origin &o)
{
    if (!o.valid())
        return OriginText::tr("No non-finite value so far.");
    QString where = OriginText::tr("Step %1, phase %2").arg(o.step).arg(phaseText(o.phase));
    if (o.layer >= 0)
        where += OriginText::tr(", layer '%1' (%2)")
                     .arg(o.layerPath.empty() ? OriginText::tr("model") : QString::fromStdString(o.layerPath),
                          o.produced ? OriginText::tr("produced it") : OriginText::tr("passed it on"));
    if (!o.op.empty())
        where += OriginText::tr(", op %1").arg(QString::fromStdString(o.op));
    if (!o.source.empty())
        where += OriginText::tr(", at %1").arg(QString::fromStdString(o.source));
    return where;
}

}  // namespace nanscope
