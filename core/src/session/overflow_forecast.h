#pragma once
// Seeing an overflow coming: the trend of each layer's log10 forward absmax (and the loss's)
// over the recent steps. When it would reach the run precision's largest finite value within
// the horizon, one warning for that series ("fc2 output grows x9.7 a step: fp32 overflow in about
// 4 steps"). A false alarm is a defect, so a series must already be a quarter of the way to the
// largest value (in decades) and grow steadily: a straight fit over the last 16 steps that
// explains 80% of their spread and rises half a decade, or three rises in a row, each larger than
// the last and a decade together, for growth that accelerates.
#include "nanscope/controls.h"
#include "nanscope/records.h"

#include <deque>
#include <string>
#include <vector>

namespace nanscope {

// The largest finite value of a precision: 3.4e38 (fp32), 3.39e38 (bf16), 65504 (fp16).
double largestFinite(Precision p);

class OverflowForecast {
public:
    static constexpr int kDefaultHorizon = 50;
    explicit OverflowForecast(int horizon = kDefaultHorizon) : horizon_(horizon) {}

    void reset(const std::vector<Layer> &layers);
    // A computed step, in order: the warnings it raises (EventKind::Warning).
    std::vector<Event> add(const StepRecord &record, Precision precision, const std::string &precisionName);

private:
    struct Track {
        std::deque<std::pair<int, double>> points;  // step, log10 of the finite absmax
        bool warned = false;
    };
    // Growth in decades per step, when steady; 0 otherwise.
    static double steadyGrowth(const Track &t);
    void follow(Track &t, int step, double value, double limit, int layer, const std::string &what,
                const std::string &precisionName, std::vector<Event> &out) const;

    int horizon_;
    std::vector<Layer> layers_;
    std::vector<Track> tracks_;
    std::vector<bool> computes_;  // a leaf: containers only pass their children's outputs on
    Track loss_;
};

}  // namespace nanscope
