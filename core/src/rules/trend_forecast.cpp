#include "rules/trend_forecast.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace nanscope {

namespace {

constexpr std::size_t kWindow = 16;    // steps a straight fit looks back over
constexpr std::size_t kMinPoints = 4;  // before any trend is trusted
constexpr double kMinFit = 0.8;        // the share of the spread a straight fit must explain
// Noise must not pass for growth: a fitted line must rise half a decade over its window, and
// accelerating growth a whole decade over its last three steps.
constexpr double kMinFittedRise = 0.5;
constexpr double kMinAcceleratingRise = 1.0;

}  // namespace

void TrendForecast::reset(const std::vector<Layer> &layers)
{
    layers_ = layers;
    tracks_.assign(layers.size(), LayerTracks{});
    // A container's output is its last child's: only the layers that compute are followed.
    computes_.assign(layers.size(), true);
    for (const Layer &l : layers)
        if (l.parent >= 0 && std::size_t(l.parent) < computes_.size())
            computes_[std::size_t(l.parent)] = false;
    loss_ = Track{};
    lowestScaleBelowOne_ = 1.0;
    lossScaleWarned_ = false;
}

double TrendForecast::steadyGrowth(const Track &t)
{
    const std::size_t n = t.points.size();
    if (n < kMinPoints)
        return 0.0;
    // Accelerating growth (a diverging run doubles its exponent each step): the latest three
    // increments each larger than the one before, at their mean rate.
    const auto rise = [&t, n](std::size_t k) { return t.points[n - k].second - t.points[n - k - 1].second; };
    double accelerating = 0.0;
    if (rise(3) > 0 && rise(2) > rise(3) && rise(1) > rise(2) && rise(1) + rise(2) + rise(3) >= kMinAcceleratingRise)
        accelerating = (rise(1) + rise(2) + rise(3)) / 3.0;
    // Steady growth: a least-squares line through the window.
    double mx = 0, my = 0;
    for (const auto &[x, y] : t.points) {
        mx += x;
        my += y;
    }
    mx /= double(n);
    my /= double(n);
    double sxx = 0, sxy = 0, syy = 0;
    for (const auto &[x, y] : t.points) {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
        syy += (y - my) * (y - my);
    }
    double linear = 0.0;
    const double span = double(t.points.back().first - t.points.front().first);
    if (sxx > 0 && syy > 0 && sxy > 0 && sxy * sxy / (sxx * syy) >= kMinFit && sxy / sxx * span >= kMinFittedRise)
        linear = sxy / sxx;
    return std::max(accelerating, linear);
}

bool TrendForecast::follow(Track &t, int step, double logValue, double top, double partOfTheWay, double *growth,
                           double *stepsLeft) const
{
    if (!std::isfinite(logValue)) {
        t.points.clear();  // a non-finite or zero value breaks the trend
        return false;
    }
    while (!t.points.empty() && t.points.back().first >= step)
        t.points.pop_back();  // a retried step replaces what it measured before
    t.points.emplace_back(step, logValue);
    if (t.points.size() > kWindow)
        t.points.pop_front();
    if (t.warned || logValue < top * partOfTheWay)  // far from the limit: early training moves fast
        return false;
    *growth = steadyGrowth(t);
    if (*growth <= 0.0)
        return false;
    *stepsLeft = (top - logValue) / *growth;
    if (*stepsLeft > horizon_)
        return false;
    t.warned = true;
    return true;
}

namespace {

// With `digits` significant digits, as a stream writes it: "9.7", "1.6e+04".
std::string shortNumber(double v, int digits)
{
    std::ostringstream text;
    text.precision(digits);
    text << v;
    return text.str();
}

// A forecast's event: message `id` ("overflow-output") with "-1" when one step is left.
Event forecast(int step, int layer, const std::string &id, double stepsLeft, std::vector<std::string> args)
{
    const long n = std::max(1L, std::lround(stepsLeft));
    args.push_back(std::to_string(n));
    return Event(EventKind::Warning, step, layer, EventMessage{n == 1 ? id + "-1" : id, std::move(args)});
}

}  // namespace

void TrendForecast::followOverflow(Track &t, int step, double value, double limit, int layer, const char *subject,
                                   const std::string &name, const std::string &precisionName,
                                   std::vector<Event> &out) const
{
    double growth = 0, stepsLeft = 0;
    const double logValue = value > 0.0 ? std::log10(value) : NAN;
    if (!follow(t, step, logValue, std::log10(limit), 0.25, &growth, &stepsLeft))
        return;
    out.push_back(forecast(step, layer, std::string("overflow-") + subject, stepsLeft,
                           {name, shortNumber(std::pow(10.0, growth), 2), precisionName}));
}

void TrendForecast::followVanishing(Track &t, int step, double value, double smallest, int layer, const char *subject,
                                    const std::string &name, const std::string &precisionName,
                                    std::vector<Event> &out) const
{
    // Falling values are followed as rising ones: -log10 of the value against -log10 of the limit.
    double growth = 0, stepsLeft = 0;
    const double logValue = value > 0.0 ? -std::log10(value) : NAN;
    if (!follow(t, step, logValue, -std::log10(smallest), 0.5, &growth, &stepsLeft))
        return;
    out.push_back(forecast(step, layer, std::string("vanishing-") + subject, stepsLeft,
                           {name, shortNumber(std::pow(10.0, -growth), 2), precisionName, shortNumber(smallest, 2)}));
}

void TrendForecast::followUpdate(LayerTracks &t, const StepRecord &r, int layer, std::vector<Event> &out) const
{
    constexpr int kLargeRunning = 3, kTinyRunning = 20;
    constexpr double kTiny = 1e-7;  // fp32 keeps about 7 significant digits
    const LayerHealth &h = r.layers[std::size_t(layer)];
    const double ratio = h.updateRatio;
    const bool gradientsFlow = h.paramGrads.present && h.paramGrads.finiteL2 > 0.0 && r.learningRate > 0.0;
    t.largeUpdates = std::isfinite(ratio) && ratio >= 1.0 ? t.largeUpdates + 1 : 0;
    t.tinyUpdates = std::isfinite(ratio) && ratio < kTiny && gradientsFlow ? t.tinyUpdates + 1 : 0;
    if (t.updateWarned || (t.largeUpdates < kLargeRunning && t.tinyUpdates < kTinyRunning))
        return;
    t.updateWarned = true;
    const std::string &path = layers_[std::size_t(layer)].path;
    const std::string name = path.empty() ? std::string("the model") : path;
    const bool large = t.largeUpdates >= kLargeRunning;
    out.push_back(Event(EventKind::Warning, r.step, layer,
                        EventMessage{large ? "updates-large" : "updates-tiny",
                                     {name, shortNumber(ratio, 2), std::to_string(large ? kLargeRunning : kTinyRunning)}}));
}

void TrendForecast::followLossScale(const StepRecord &r, std::vector<Event> &out)
{
    if (!r.lossScaling || lossScaleWarned_ || !(r.lossScale < 1.0))
        return;
    if (r.lossScale < lowestScaleBelowOne_ && lowestScaleBelowOne_ < 1.0) {
        lossScaleWarned_ = true;
        out.push_back(
            Event(EventKind::Warning, r.step, -1, EventMessage{"loss-scale-falling", {shortNumber(r.lossScale, 3)}}));
    }
    lowestScaleBelowOne_ = std::min(lowestScaleBelowOne_, r.lossScale);
}

std::vector<Event> TrendForecast::add(const StepRecord &r, Precision precision, const std::string &precisionName)
{
    std::vector<Event> out;
    if (horizon_ <= 0)
        return out;
    followLossScale(r, out);  // a scaler's back-off is about this step, finite or not
    if (r.failed())
        return out;  // the value is already here: nothing to forecast on this step
    const double limit = largestFinite(precision), smallest = smallestPositive(precision);
    const bool reduced = precision != Precision::FP32;
    for (std::size_t i = 0; i < tracks_.size() && i < r.layers.size(); ++i) {
        const LayerHealth &h = r.layers[i];
        LayerTracks &t = tracks_[i];
        followUpdate(t, r, int(i), out);
        if (!computes_[i])
            continue;
        const std::string name = layers_[i].path.empty() ? std::string("the model") : layers_[i].path;
        if (h.forward.present) {
            const double value = h.forward.hasNonFinite() ? NAN : h.forward.absMax;
            followOverflow(t.output, r.step, value, limit, int(i), "output", name, precisionName, out);
            if (reduced)
                followVanishing(t.outputFalls, r.step, value, smallest, int(i), "output", name, precisionName, out);
        }
        if (reduced && h.grad.present)
            followVanishing(t.gradFalls, r.step, h.grad.hasNonFinite() ? NAN : h.grad.absMax, smallest, int(i),
                            "gradient", name, precisionName, out);
    }
    // The loss is computed in fp32 under mixed precision (autocast): fp32's limit.
    followOverflow(loss_, r.step, r.lossHealth.hasNonFinite() ? NAN : std::abs(r.loss), largestFinite(Precision::FP32),
                   -1, "loss", "", precision == Precision::FP32 ? precisionName : std::string("fp32"), out);
    return out;
}

}  // namespace nanscope
