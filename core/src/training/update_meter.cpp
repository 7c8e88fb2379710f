#include "training/update_meter.h"

#include "health/lane_sum.h"
#include "model_api/model_adapter.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <limits>

namespace nanscope {

namespace {

double sumSquaredDifference(const float *a, const float *b, std::int64_t n)
{
    return sumInLanes<float>(n, [a, b](std::int64_t i) {
        const float d = a[i] - b[i];
        return d * d;
    });
}

}  // namespace

bool UpdateMeter::refreshViews(const ModelAdapter &model)
{
    std::vector<at::Tensor> params;
    std::vector<std::int64_t> lengths;
    std::vector<std::size_t> layerOf, viewLayer;
    for (std::size_t l = 0; l < model.layers().size(); ++l) {
        std::int64_t length = 0;
        for (const at::Tensor &p : model.layerParameters(int(l))) {
            if (p.numel() == 0)
                continue;  // nothing to move, and no storage to read
            params.push_back(p);
            viewLayer.push_back(layerOf.size());
            length += p.numel();
        }
        if (length > 0) {
            lengths.push_back(length);
            layerOf.push_back(l);
        }
    }
    bool same = params.size() == storage_.size();
    for (std::size_t i = 0; same && i < params.size(); ++i)
        same = params[i].data_ptr() == storage_[i];
    if (same)
        return !views_.empty();
    views_.clear();
    storage_.clear();
    for (const at::Tensor &p : params) {
        // One flat buffer needs one dtype and device, and views that alias the parameters.
        if (!p.is_contiguous() || p.scalar_type() != params.front().scalar_type() ||
            p.device() != params.front().device()) {
            views_.clear();
            storage_.clear();
            return false;
        }
        views_.push_back(p.detach().view({-1}));
        storage_.push_back(p.data_ptr());
    }
    lengths_ = std::move(lengths);
    layerOf_ = std::move(layerOf);
    viewLayer_ = std::move(viewLayer);
    const std::int64_t total = std::accumulate(lengths_.begin(), lengths_.end(), std::int64_t(0));
    onHost_ = !views_.empty() && views_.front().device().is_cpu() && views_.front().scalar_type() == at::kFloat;
    if (onHost_) {
        hostBefore_.resize(std::size_t(total));
        before_ = after_ = segmentLengths_ = at::Tensor();
        return true;
    }
    before_ = views_.empty() ? at::Tensor() : at::empty({total}, views_.front().options());
    after_ = views_.empty() ? at::Tensor() : at::empty({total}, views_.front().options());
    segmentLengths_ = views_.empty()
                          ? at::Tensor()
                          : at::tensor(lengths_, at::TensorOptions().dtype(at::kLong)).to(views_.front().device());
    return !views_.empty();
}

void UpdateMeter::before(const ModelAdapter &model)
{
    at::NoGradGuard noGrad;
    if (!refreshViews(model))
        return;
    if (!onHost_) {
        at::cat_out(before_, views_, 0);
        return;
    }
    float *to = hostBefore_.data();
    for (const at::Tensor &v : views_) {
        std::memcpy(to, v.data_ptr<float>(), std::size_t(v.numel()) * sizeof(float));
        to += v.numel();
    }
}

void UpdateMeter::setRatios(StepRecord &record, const double *squares) const
{
    for (std::size_t j = 0; j < layerOf_.size() && layerOf_[j] < record.layers.size(); ++j) {
        LayerHealth &lh = record.layers[layerOf_[j]];
        const double norm = lh.params.finiteL2;
        lh.updateRatio =
            norm > 0.0 && std::isfinite(norm) ? std::sqrt(squares[j]) / norm : std::numeric_limits<double>::quiet_NaN();
    }
}

void UpdateMeter::afterOnHost(StepRecord &record)
{
    std::vector<double> squares(layerOf_.size(), 0.0);
    const float *before = hostBefore_.data();
    for (std::size_t i = 0; i < views_.size(); ++i) {
        const std::int64_t n = views_[i].numel();
        squares[viewLayer_[i]] += sumSquaredDifference(views_[i].data_ptr<float>(), before, n);
        before += n;
    }
    setRatios(record, squares.data());
}

void UpdateMeter::after(StepRecord &record)
{
    at::NoGradGuard noGrad;
    if (views_.empty())
        return;  // parameters of mixed dtypes or devices: no ratio is measured
    if (onHost_) {
        afterOnHost(record);
        return;
    }
    at::cat_out(after_, views_, 0);
    before_.sub_(after_);
    before_.mul_(before_);
    // One op sums each layer's stretch (a loop of per-layer sums cost 3% of a small model's step).
    const at::Tensor sums = at::segment_reduce(before_, "sum", segmentLengths_);
    const at::Tensor host = sums.to(at::kCPU, at::kDouble);  // one read for every layer
    setRatios(record, host.data_ptr<double>());
}

}  // namespace nanscope
