#pragma once
// Test helper: a record, an event or a health read back from a run file is the one that was
// recorded, bit for bit (a NaN equals a NaN; ids of the run are not compared); two summaries that
// say the same.
#include "nanscope/records.h"

#include <QString>
#include <QStringList>

#include <cmath>
#include <vector>

namespace nanscope::testing {

// Bit for bit, the sign of zero included; any NaN equals any NaN (SQLite keeps no NaN payload).
inline bool same(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

inline QString diffHealth(const char *what, const TensorHealth &a, const TensorHealth &b)
{
    if (a.present != b.present || a.numel != b.numel || a.nan != b.nan || a.posInf != b.posInf ||
        a.negInf != b.negInf || !same(a.min, b.min) || !same(a.max, b.max) || !same(a.absMax, b.absMax) ||
        !same(a.finiteL2, b.finiteL2))
        return QString("%1: live %2 numel %3 nan %4 +inf %5 -inf %6 min %7 max %8 absmax %9 l2 %10, read %11 %12 "
                       "%13 %14 %15 %16 %17 %18 %19")
            .arg(what)
            .arg(a.present)
            .arg(a.numel)
            .arg(a.nan)
            .arg(a.posInf)
            .arg(a.negInf)
            .arg(a.min, 0, 'g', 17)
            .arg(a.max, 0, 'g', 17)
            .arg(a.absMax, 0, 'g', 17)
            .arg(a.finiteL2, 0, 'g', 17)
            .arg(b.present)
            .arg(b.numel)
            .arg(b.nan)
            .arg(b.posInf)
            .arg(b.negInf)
            .arg(b.min, 0, 'g', 17)
            .arg(b.max, 0, 'g', 17)
            .arg(b.absMax, 0, 'g', 17)
            .arg(b.finiteL2, 0, 'g', 17);
    return {};
}

inline QString diffOrigin(const Origin &a, const Origin &b)
{
    if (a.step != b.step || a.phase != b.phase || a.layer != b.layer || a.layerPath != b.layerPath || a.op != b.op ||
        a.source != b.source || a.produced != b.produced || a.explanation != b.explanation || a.call != b.call ||
        a.calls != b.calls)
        return QString("origin: live %1 %2 %3 '%4' %5 (call %11 of %12), read %6 %7 %8 '%9' %10 (call %13 of %14)")
            .arg(a.step)
            .arg(phaseName(a.phase))
            .arg(a.layer)
            .arg(QString::fromStdString(a.op))
            .arg(QString::fromStdString(a.explanation))
            .arg(b.step)
            .arg(phaseName(b.phase))
            .arg(b.layer)
            .arg(QString::fromStdString(b.op))
            .arg(QString::fromStdString(b.explanation))
            .arg(a.call)
            .arg(a.calls)
            .arg(b.call)
            .arg(b.calls);
    return {};
}

// Empty when equal, else the first difference.
inline QString diffRecord(const StepRecord &a, const StepRecord &b)
{
    const QString at = QString("step %1: ").arg(a.step);
    if (a.step != b.step || !same(a.loss, b.loss) || !same(a.gradNorm, b.gradNorm) ||
        !same(a.gradNormClipped, b.gradNormClipped) || !same(a.learningRate, b.learningRate) ||
        !same(a.lossScale, b.lossScale) || a.skipped != b.skipped || a.rolledBack != b.rolledBack || a.why != b.why ||
        !same(a.stepMillis, b.stepMillis) || a.zeroedGradients != b.zeroedGradients || a.precision != b.precision)
        return at + QString("scalars: live loss %1 grad %2 lr %3, read %4 %5 %6 (step %7)")
                        .arg(a.loss, 0, 'g', 17)
                        .arg(a.gradNorm, 0, 'g', 17)
                        .arg(a.learningRate, 0, 'g', 17)
                        .arg(b.loss, 0, 'g', 17)
                        .arg(b.gradNorm, 0, 'g', 17)
                        .arg(b.learningRate, 0, 'g', 17)
                        .arg(b.step);
    if (a.badSamples != b.badSamples || a.quarantined != b.quarantined || a.overflowLayers != b.overflowLayers)
        return at + "sample or layer lists differ";
    if (QString d = diffOrigin(a.origin, b.origin); !d.isEmpty())
        return at + d;
    if (QString d = diffHealth("input", a.inputHealth, b.inputHealth); !d.isEmpty())
        return at + d;
    if (QString d = diffHealth("loss", a.lossHealth, b.lossHealth); !d.isEmpty())
        return at + d;
    if (a.layers.size() != b.layers.size())
        return at + QString("%1 layers live, %2 read").arg(a.layers.size()).arg(b.layers.size());
    for (std::size_t i = 0; i < a.layers.size(); ++i) {
        const LayerHealth &x = a.layers[i], &y = b.layers[i];
        const QString l = at + QString("layer %1 ").arg(i);
        if (x.inputFinite != y.inputFinite)
            return l + "inputFinite";
        if (!same(x.updateRatio, y.updateRatio))
            return l + QString("update ratio: live %1, read %2").arg(x.updateRatio).arg(y.updateRatio);
        for (const auto &[name, p, q] :
             {std::tuple{"forward", &x.forward, &y.forward}, std::tuple{"grad", &x.grad, &y.grad},
              std::tuple{"params", &x.params, &y.params}, std::tuple{"param grads", &x.paramGrads, &y.paramGrads}})
            if (QString d = diffHealth(name, *p, *q); !d.isEmpty())
                return l + d;
    }
    return {};
}

inline QString diffEvent(const Event &a, const Event &b)
{
    if (a.kind != b.kind || a.step != b.step || a.layer != b.layer || a.text != b.text)
        return QString("event: live %1 '%2', read %3 '%4'")
            .arg(a.step)
            .arg(QString::fromStdString(a.text))
            .arg(b.step)
            .arg(QString::fromStdString(b.text));
    if (QString d = diffOrigin(a.origin, b.origin); !d.isEmpty())
        return "event " + d;
    if (a.changes.size() != b.changes.size())
        return "event: control changes differ in number";
    for (std::size_t i = 0; i < a.changes.size(); ++i)
        if (a.changes[i].control != b.changes[i].control || a.changes[i].before != b.changes[i].before ||
            a.changes[i].after != b.changes[i].after)
            return QString("event: control change %1 differs").arg(i);
    if (!(a.message == b.message))
        return QString("event: message live '%1', read '%2'")
            .arg(QString::fromStdString(a.message.id), QString::fromStdString(b.message.id));
    return {};
}

// Empty when two summaries say the same (every field), else the first difference.
inline QString diffSummary(const RunSummary &a, const RunSummary &b)
{
    const auto differs = [](const char *what, const QString &x, const QString &y) {
        return QString("%1: %2, read %3").arg(what, x, y);
    };
    const auto n = [](double v) { return QString::number(v, 'g', 17); };
    const auto ids = [](const auto &v) {
        QStringList out;
        for (const auto &i : v)
            out << QString::number(i);
        return out.join(' ');
    };
    if (a.source != b.source)
        return differs("source", a.source.c_str(), b.source.c_str());
    if (a.stepsRun != b.stepsRun || a.nonFiniteSteps != b.nonFiniteSteps || a.firstNonFiniteStep != b.firstNonFiniteStep)
        return differs("steps, non-finite, first", ids(std::vector<int>{a.stepsRun, a.nonFiniteSteps, a.firstNonFiniteStep}),
                       ids(std::vector<int>{b.stepsRun, b.nonFiniteSteps, b.firstNonFiniteStep}));
    if (const QString d = diffOrigin(a.origin, b.origin); !d.isEmpty())
        return "origin: " + d;
    if (a.rollbacks != b.rollbacks || a.skippedSteps != b.skippedSteps || a.scalerSkippedSteps != b.scalerSkippedSteps)
        return differs("rollbacks, skipped, scaler-skipped",
                       ids(std::vector<int>{a.rollbacks, a.skippedSteps, a.scalerSkippedSteps}),
                       ids(std::vector<int>{b.rollbacks, b.skippedSteps, b.scalerSkippedSteps}));
    if (a.nonFiniteStepsPerLayer != b.nonFiniteStepsPerLayer)
        return differs("per layer", ids(a.nonFiniteStepsPerLayer), ids(b.nonFiniteStepsPerLayer));
    if (a.quarantinedSamples != b.quarantinedSamples)
        return differs("quarantined", ids(a.quarantinedSamples), ids(b.quarantinedSamples));
    // Steps per second is a sum of step times: summed by chunks it may differ in the last digits.
    if (!same(a.finalLearningRate, b.finalLearningRate) || !same(a.finalLossScale, b.finalLossScale) ||
        std::fabs(a.stepsPerSecond - b.stepsPerSecond) > 1e-12 * std::fabs(a.stepsPerSecond))
        return differs("lr, scale, steps/s",
                       n(a.finalLearningRate) + " " + n(a.finalLossScale) + " " + n(a.stepsPerSecond),
                       n(b.finalLearningRate) + " " + n(b.finalLossScale) + " " + n(b.stepsPerSecond));
    if (a.precision != b.precision || a.optimizer != b.optimizer || a.error != b.error)
        return differs("precision, optimizer, error", QString::fromStdString(a.precision + " | " + a.optimizer + " | " + a.error),
                       QString::fromStdString(b.precision + " | " + b.optimizer + " | " + b.error));
    if (a.stoppedByPolicy != b.stoppedByPolicy || a.finalStateFinite != b.finalStateFinite || a.finished != b.finished)
        return differs("stopped, final state finite, finished",
                       ids(std::vector<int>{a.stoppedByPolicy, a.finalStateFinite, a.finished}),
                       ids(std::vector<int>{b.stoppedByPolicy, b.finalStateFinite, b.finished}));
    const auto challenge = [](const RunSummary &s) {
        return s.challenge ? QString::fromStdString(s.challenge->id + " | " + s.challenge->goal) +
                                 (s.challenge->met ? " | met" : " | not met")
                           : QString("none");
    };
    if (challenge(a) != challenge(b))
        return differs("challenge", challenge(a), challenge(b));
    return {};
}

}  // namespace nanscope::testing
