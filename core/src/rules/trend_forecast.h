#pragma once
// Seeing a NaN coming: trends over the recent steps that end in a non-finite value or a lost one.
// - Overflow: each computing layer's log10 forward absmax, and the loss's, heading for the run
//   precision's largest finite value within the horizon ("fc2 output grows x9.7 a step: fp32
//   overflow in about 4 steps").
// - Vanishing (fp16, bf16): a layer's output or the gradient flowing into it shrinking towards the
//   precision's smallest value, below which it rounds to 0.
// - Update ratio: a layer whose update is as large as its weights (|dw| / |w| >= 1) three steps
//   running; usual updates are 1e-4..1e-2 of the weights, and weights replaced wholesale each step
//   diverge. Or, far below: updates under 1e-7 of the weights (fp32 keeps about 7 digits) for 20
//   steps running while gradients flow and the learning rate is not 0: lost to rounding.
// - Loss scale: a dynamic loss scale that backs off below 1 and keeps falling: gradients overflow
//   fp16 even unscaled, and the scaler has nothing left to give.
// A false alarm is a defect, so a trend must already be part of the way to its limit (a quarter
// of the decades for overflow, half for vanishing) and steady: a straight fit over the last 16
// steps that explains 80% of their spread and moves half a decade, or three moves in a row, each
// larger than the last and a decade together. One warning per series and run.
#include "nanscope/controls.h"
#include "nanscope/precision.h"
#include "nanscope/records.h"

#include <deque>
#include <string>
#include <vector>

namespace nanscope {

class TrendForecast {
public:
    static constexpr int kDefaultHorizon = 50;
    // A horizon of 0 forecasts nothing.
    explicit TrendForecast(int horizon = kDefaultHorizon) : horizon_(horizon) {}

    void reset(const std::vector<Layer> &layers);
    // A computed step, in order: the warnings it raises (EventKind::Warning).
    std::vector<Event> add(const StepRecord &record, Precision precision, const std::string &precisionName);

private:
    struct Track {
        std::deque<std::pair<int, double>> points;  // step, log10 of the value (negated when falling)
        bool warned = false;
    };
    struct LayerTracks {
        Track output;       // towards overflow
        Track outputFalls;  // towards 0 (fp16, bf16)
        Track gradFalls;
        int largeUpdates = 0;  // steps running with |dw| / |w| >= 1
        int tinyUpdates = 0;   // steps running with |dw| / |w| < 1e-7 while gradients flow
        bool updateWarned = false;
    };
    // How fast the series moves towards its limit, in decades a step, when steady; 0 otherwise.
    static double steadyGrowth(const Track &t);
    // Follows a value; returns the steps left to `top` (in the track's log space) when it warns.
    bool follow(Track &t, int step, double logValue, double top, double partOfTheWay, double *growth,
                double *stepsLeft) const;
    // `subject`: "output" (of layer `name`), "gradient" (into it) or "loss": the forecast's message.
    void followOverflow(Track &t, int step, double value, double limit, int layer, const char *subject,
                        const std::string &name, const std::string &precisionName, std::vector<Event> &out) const;
    void followVanishing(Track &t, int step, double value, double smallest, int layer, const char *subject,
                         const std::string &name, const std::string &precisionName, std::vector<Event> &out) const;
    void followUpdate(LayerTracks &t, const StepRecord &r, int layer, std::vector<Event> &out) const;
    void followLossScale(const StepRecord &r, std::vector<Event> &out);

    int horizon_;
    std::vector<Layer> layers_;
    std::vector<LayerTracks> tracks_;
    std::vector<bool> computes_;  // a leaf: containers only pass their children's outputs on
    Track loss_;
    double lowestScaleBelowOne_ = 1.0;
    bool lossScaleWarned_ = false;
};

}  // namespace nanscope
