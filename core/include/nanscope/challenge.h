#pragma once
// Each scenario's challenge: a goal a student reaches with the window's controls (or the command
// line's), which the run itself checks from its records when it ends (docs/challenges.md). Needs
// neither LibTorch nor Qt, so that every reader of a summary agrees with the run that wrote it.
#include "nanscope/controls.h"
#include "nanscope/records.h"
#include "nanscope/run_config.h"

#include <optional>
#include <string>
#include <vector>

namespace nanscope {

// What a challenge is judged on: the run's summary, the controls it ended with, and the mean of
// its last kChallengeLossWindow losses (NaN when one of them was not finite or there were none).
struct ChallengeEvidence {
    const RunSummary &summary;
    Controls finalControls;
    double recentLoss;
};
constexpr int kChallengeLossWindow = 20;

struct Challenge {
    std::string scenario;            // the scenario's id, and the challenge's
    std::string goal;                // one sentence
    std::vector<std::string> hints;  // up to three, from a nudge to the answer
    bool (*met)(const ChallengeEvidence &);
};

const std::vector<Challenge> &challenges();
const Challenge *findChallenge(const std::string &scenario);

// The result of a scenario run's challenge; empty for a model file, a recorded loop, or a scenario
// without a challenge.
std::optional<ChallengeResult> checkChallenge(const RunConfig &config, const ChallengeEvidence &evidence);

}  // namespace nanscope
