#include "session/overflow_forecast.h"

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

double largestFinite(Precision p)
{
    switch (p) {
    case Precision::FP16: return 65504.0;
    case Precision::BF16: return 3.3895313892515355e38;
    case Precision::FP32: break;
    }
    return 3.4028234663852886e38;
}

void OverflowForecast::reset(const std::vector<Layer> &layers)
{
    layers_ = layers;
    tracks_.assign(layers.size(), Track{});
    // A container's output is its last child's: only the layers that compute are followed.
    computes_.assign(layers.size(), true);
    for (const Layer &l : layers)
        if (l.parent >= 0 && std::size_t(l.parent) < computes_.size())
            computes_[std::size_t(l.parent)] = false;
    loss_ = Track{};
}

double OverflowForecast::steadyGrowth(const Track &t)
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

void OverflowForecast::follow(Track &t, int step, double value, double limit, int layer, const std::string &what,
                              const std::string &precisionName, std::vector<Event> &out) const
{
    if (!std::isfinite(value) || value <= 0.0) {
        t.points.clear();  // a non-finite or empty value breaks the trend
        return;
    }
    while (!t.points.empty() && t.points.back().first >= step)
        t.points.pop_back();  // a retried step replaces what it measured before
    t.points.emplace_back(step, std::log10(value));
    if (t.points.size() > kWindow)
        t.points.pop_front();
    if (t.warned)
        return;
    const double top = std::log10(limit), now = t.points.back().second;
    if (now < top / 4.0)  // far from the largest value: early training moves fast from small values
        return;
    const double growth = steadyGrowth(t);
    if (growth <= 0.0)
        return;
    const double stepsLeft = (top - now) / growth;
    if (stepsLeft > horizon_)
        return;
    t.warned = true;
    std::ostringstream text;
    text.precision(2);  // "x9.7", "x1.6e+04"
    text << what << " grows x" << std::pow(10.0, growth) << " a step: " << precisionName << " overflow in about "
         << std::max(1, int(std::lround(stepsLeft))) << " step" << (std::lround(stepsLeft) > 1 ? "s" : "");
    out.push_back(Event{EventKind::Warning, step, layer, text.str()});
}

std::vector<Event> OverflowForecast::add(const StepRecord &r, Precision precision, const std::string &precisionName)
{
    std::vector<Event> out;
    if (r.failed())
        return out;  // the value is already here: nothing to forecast on this step
    const double limit = largestFinite(precision);
    for (std::size_t i = 0; i < tracks_.size() && i < r.layers.size(); ++i) {
        const TensorHealth &f = r.layers[i].forward;
        if (!f.present || !computes_[i])
            continue;
        const std::string name = (layers_[i].path.empty() ? std::string("the model") : layers_[i].path) + " output";
        follow(tracks_[i], r.step, f.hasNonFinite() ? NAN : f.absMax, limit, int(i), name, precisionName, out);
    }
    // The loss is computed in fp32 under mixed precision (autocast): fp32's limit.
    follow(loss_, r.step, r.lossHealth.hasNonFinite() ? NAN : std::abs(r.loss), largestFinite(Precision::FP32), -1,
           "the loss", precision == Precision::FP32 ? precisionName : std::string("fp32"), out);
    return out;
}

}  // namespace nanscope
