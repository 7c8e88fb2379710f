// The challenges of docs/challenges.md. A goal is met by what the run recorded, never by the
// controls alone: each one asks for a finite run of a given length and, where the lesson is about
// more than finiteness, for the loss it reached or the recovery it needed. tst_challenges reaches
// every goal with the fix the lesson teaches and misses it with the scenario's defaults.
#include "nanscope/challenge.h"

#include "contract/translatable.h"

#include <cmath>
#include <string>

namespace nanscope {

namespace {

// A run that finished the steps without an error, with every parameter finite at the end.
bool finishedFinite(const RunSummary &s, int steps)
{
    return s.error.empty() && s.stepsRun >= steps && s.finalStateFinite;
}

bool noNonFiniteStep(const RunSummary &s, int steps) { return finishedFinite(s, steps) && s.nonFiniteSteps == 0; }

bool lossBelow(const ChallengeEvidence &e, double limit) { return std::isfinite(e.recentLoss) && e.recentLoss < limit; }

}  // namespace

const std::vector<Challenge> &challenges()
{
    static const std::vector<Challenge> list = {
        {"large-lr-ce",
         QT_TRANSLATE_NOOP("nanscope::core", "Train 200 steps with a mean loss below 1.8 over the last 20 steps."),
         {QT_TRANSLATE_NOOP(
              "nanscope::core",
              "The loss stays finite, yet it jumps around far above where it started: what makes each step so large?"),
          QT_TRANSLATE_NOOP("nanscope::core", "The learning rate of 100 overshoots the minimum at every step."),
          QT_TRANSLATE_NOOP("nanscope::core", "Set the learning rate to 0.1 and start again.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 200) && lossBelow(e, 1.8); }},
        {"large-lr-mse",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "Train 200 steps without a non-finite step, with a learning rate of at least 0.1 at the end."),
         {QT_TRANSLATE_NOOP(
              "nanscope::core",
              "Watch the loss in the first steps: it grows by a constant factor each step before it overflows."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "A step larger than 2 / curvature makes every update overshoot by more than it corrects."),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "Set the learning rate to 0.1 (or keep 1.0 and clip the gradient norm to 1) and start again.")},
         [](const ChallengeEvidence &e) {
             return noNonFiniteStep(e.summary, 200) && e.summary.finalLearningRate >= 0.1;
         }},
        {"nan-input",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "Train 60 steps to a finite model while throwing away no more than the two bad samples and never "
             "rolling back."),
         {QT_TRANSLATE_NOOP(
              "nanscope::core",
              "The origin says the first non-finite value comes from the input itself, not from a layer."),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "Two samples of the data hold a NaN and an Inf; every batch that draws them poisons BatchNorm."),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "Turn on \"Quarantine non-finite samples\" in the recovery policy (--recovery skip) and start again.")},
         [](const ChallengeEvidence &e) {
             return noNonFiniteStep(e.summary, 60) && e.summary.quarantinedSamples.size() <= 2 &&
                    e.summary.rollbacks == 0;
         }},
        {"log-zero",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "Train 30 steps without a non-finite step, keeping the hand-written log-loss."),
         {QT_TRANSLATE_NOOP("nanscope::core", "The probabilities are finite; look at which op turns them into -Inf."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "Softmax underflows to exactly 0, and log(0) = -Inf; 0 * -Inf is NaN in the loss."),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "Turn on the lesson's fix (--fix), the stable log: probabilities clamped to at least eps.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 30); }},
        {"bn-constant",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "Train 30 steps without a non-finite step, keeping the constant feature and the BatchNorm."),
         {QT_TRANSLATE_NOOP("nanscope::core", "The map lights up in the BatchNorm layer at the very first step."),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "One feature never varies: its variance is 0, and BatchNorm divides 0 by sqrt(0 + eps) with eps = 0."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "Turn on the lesson's fix (--fix), BatchNorm's eps: 1e-5 is PyTorch's default.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 30); }},
        {"sqrt-backward",
         QT_TRANSLATE_NOOP("nanscope::core", "Train 30 steps without a non-finite gradient."),
         {QT_TRANSLATE_NOOP("nanscope::core", "The forward pass is finite: the NaN is born in backward."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "Zero-padded samples reach sqrt at exactly 0, whose derivative 1 / (2 sqrt(0)) is Inf."),
          QT_TRANSLATE_NOOP("nanscope::core", "Turn on the lesson's fix (--fix), an eps inside the sqrt.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 30); }},
        {"exploding-deep",
         QT_TRANSLATE_NOOP("nanscope::core", "Train 100 steps of the 30-layer network without a non-finite step."),
         {QT_TRANSLATE_NOOP(
              "nanscope::core",
              "Compare the activations layer by layer in the map: each layer makes them about 20 times larger."),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "No learning rate or clipping helps: the very first forward pass overflows, before any update."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "Turn on the lesson's fix (--fix), He's initialisation, and start again.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 100); }},
        {"safe-training",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "Train 200 steps to a finite model with the least recovery: quarantine only, no clipping, no "
             "zeroed gradients, no rollback."),
         {QT_TRANSLATE_NOOP("nanscope::core", "The full policy is on: which of its parts does this data really need?"),
          QT_TRANSLATE_NOOP("nanscope::core", "Only two samples are bad, and nothing else in this model overflows."),
          QT_TRANSLATE_NOOP("nanscope::core", "Keep only \"Quarantine non-finite samples\" in the recovery policy "
                                              "(--recovery skip), turn clipping off, and start again.")},
         [](const ChallengeEvidence &e) {
             const RecoveryPolicy &r = e.finalControls.recovery;
             return noNonFiniteStep(e.summary, 200) && r.quarantineSamples && !r.zeroNonFiniteGrads &&
                    !r.rollbackOnNonFiniteLoss && !e.finalControls.clipNorm && e.summary.rollbacks == 0;
         }},
        {"fp16-overflow",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "Train 300 steps in fp16 with a finite loss over the last 20 steps and no more than 10 steps skipped "
             "by the loss scaler."),
         {QT_TRANSLATE_NOOP(
              "nanscope::core",
              "The loss scaler backs off again and again: is it the gradients or the outputs that overflow?"),
          QT_TRANSLATE_NOOP("nanscope::core", "The targets are prices of about 100,000 dollars; fp16 ends at 65504."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "Turn on the lesson's fix (--fix), normalised targets, and start again in fp16.")},
         [](const ChallengeEvidence &e) {
             return finishedFinite(e.summary, 300) && e.finalControls.precision == Precision::FP16 &&
                    std::isfinite(e.recentLoss) && e.summary.scalerSkippedSteps <= 10;
         }},
        {"softmax-overflow",
         QT_TRANSLATE_NOOP("nanscope::core", "Train 30 steps without a non-finite step, keeping the raw pixel inputs."),
         {QT_TRANSLATE_NOOP("nanscope::core", "The origin names exp inside the softmax."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "Logits of a few hundred: exp overflows past 88.7, and Inf / Inf is NaN."),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "Turn on the lesson's fix (--fix), the stable softmax: shifted by the row maximum, in log space.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 30); }},
        {"zero-division",
         QT_TRANSLATE_NOOP("nanscope::core", "Train 30 steps without a non-finite step, keeping the ReLU scores."),
         {QT_TRANSLATE_NOOP("nanscope::core",
                            "Only a few samples fail: look at which op in normalize produced the NaN."),
          QT_TRANSLATE_NOOP("nanscope::core", "A sample with no positive score sums to 0, and 0 / 0 is NaN."),
          QT_TRANSLATE_NOOP("nanscope::core", "Turn on the lesson's fix (--fix), an eps in the divisor.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 30); }},
        {"hidden-by-nan-to-num",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "Train 100 steps with every weight finite and a mean loss below 0.5 over the last 20 steps."),
         {QT_TRANSLATE_NOOP("nanscope::core",
                            "The loss is finite, but look at the map and at the scale layer's parameters."),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "nan_to_num hides the bad samples from the loss, not from the gradient of the scale's weights."),
          QT_TRANSLATE_NOOP("nanscope::core", "Turn on \"Quarantine non-finite samples\" (--recovery skip) so that the "
                                              "six bad samples never reach the model.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 100) && lossBelow(e, 0.5); }},
        {"negative-variance",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "Train 100 steps without a non-finite step, keeping the Gaussian likelihood and its variance head."),
         {QT_TRANSLATE_NOOP("nanscope::core", "The origin names sqrt in the gaussian layer: what number did it get?"),
          QT_TRANSLATE_NOOP(
              "nanscope::core",
              "The head's second output is a variance, yet nothing keeps it above 0, and the samples with "
              "little noise pull it down harder the smaller it gets."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "Turn on the lesson's fix (--fix), a positive variance: softplus(v) + 1e-6.")},
         [](const ChallengeEvidence &e) { return noNonFiniteStep(e.summary, 100); }},
        {"zero-denominator",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "Train 60 steps without a non-finite step, keeping every session and the seconds-per-click "
                           "feature."),
         {QT_TRANSLATE_NOOP(
              "nanscope::core",
              "The origin names a division in the features layer, and the value it made is +Inf, not NaN."),
          QT_TRANSLATE_NOOP("nanscope::core",
                            "A few sessions have 0 clicks: their duration divided by 0 is +Inf, and the next layer "
                            "turns Inf into NaN."),
          QT_TRANSLATE_NOOP("nanscope::core", "Turn on the lesson's fix (--fix): divide by max(clicks, 1).")},
         [](const ChallengeEvidence &e) {
             return noNonFiniteStep(e.summary, 60) && e.summary.quarantinedSamples.empty();
         }},
    };
    return list;
}

const Challenge *findChallenge(const std::string &scenario)
{
    for (const Challenge &c : challenges())
        if (c.scenario == scenario)
            return &c;
    return nullptr;
}

std::optional<ChallengeResult> checkChallenge(const RunConfig &config, const ChallengeEvidence &evidence)
{
    if (config.usesModelFile() || config.isRecordedLoop())
        return std::nullopt;
    const Challenge *challenge = findChallenge(config.scenario);
    if (!challenge)
        return std::nullopt;
    return ChallengeResult{challenge->scenario, challenge->goal, challenge->met(evidence)};
}

}  // namespace nanscope
