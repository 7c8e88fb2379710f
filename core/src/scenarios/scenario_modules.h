#pragma once
// The hand-written modules of the reference scenarios (internal to scenarios.cpp): each computes
// what users write by hand, the failure included, and several carry the fix their lesson teaches
// as a switch (RunSetup::applyFix turns it on).
#include <torch/torch.h>

#include <optional>

namespace nanscope::scenario_modules {

// exp() underflows to exactly 0 in float for logit gaps beyond ~104: softmax then holds zeros.
struct RowL2NormImpl : torch::nn::Module {
    // sqrt(sum x^2) written out, as users do: its gradient at an all-zero row is 0 * Inf. The fix
    // adds eps under the root.
    at::Tensor forward(const at::Tensor &x)
    {
        const at::Tensor squares = (x * x).sum(1, /*keepdim=*/true);
        return torch::sqrt(eps ? squares + *eps : squares);
    }
    std::optional<double> eps;
};
TORCH_MODULE(RowL2Norm);

// softmax written out from its definition, as tutorials first show it: exp overflows past 88.7.
// The fix computes in log space: log-probabilities x - max - log(sum(exp(x - max))), which no
// logit overflows and no probability underflows, for a loss that takes no further log.
struct NaiveSoftmaxImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x)
    {
        if (stable) {
            const at::Tensor shifted = x - std::get<0>(x.max(1, /*keepdim=*/true));
            return shifted - torch::log(torch::exp(shifted).sum(1, /*keepdim=*/true));
        }
        const at::Tensor e = torch::exp(x);
        return e / e.sum(1, /*keepdim=*/true);
    }
    bool stable = false;
};
TORCH_MODULE(NaiveSoftmax);

// Scores normalised to weights that sum to 1 by dividing by their sum: a row of zeros is 0/0.
struct SumNormalizeImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x)
    {
        const at::Tensor sum = x.sum(1, /*keepdim=*/true);
        return x / (eps ? sum + *eps : sum);
    }
    std::optional<double> eps;  // the fix
};
TORCH_MODULE(SumNormalize);

// A learned per-feature input scale (x * weight + bias), the affine part of an input normalisation.
struct FeatureScaleImpl : torch::nn::Module {
    explicit FeatureScaleImpl(int64_t features)
        : weight(register_parameter("weight", torch::ones({features}))),
          bias(register_parameter("bias", torch::zeros({features})))
    {
    }
    at::Tensor forward(const at::Tensor &x) { return x * weight + bias; }
    at::Tensor weight, bias;
};
TORCH_MODULE(FeatureScale);

// The "stabiliser" many tutorials recommend: every NaN and +-Inf replaced by 0. Its gradient is 0
// where its input was not finite, and 0 times that NaN input is NaN in the weight gradient upstream.
struct NanToZeroImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x) { return torch::nan_to_num(x, 0.0, 0.0, 0.0); }
};
TORCH_MODULE(NanToZero);

// A Gaussian head: column 0 is the mean, column 1 the variance as the previous layer computed it,
// and the output's column 1 is its square root, the standard deviation the loss needs. Nothing
// keeps that variance positive: once an update pushes it below 0, sqrt returns NaN. The fix
// makes it positive by construction, softplus(v) + 1e-6.
struct GaussianHeadImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x)
    {
        const at::Tensor variance = x.select(1, 1).unsqueeze(1);
        const at::Tensor positive = positiveVariance ? torch::softplus(variance) + 1e-6 : variance;
        return torch::cat({x.select(1, 0).unsqueeze(1), torch::sqrt(positive)}, 1);
    }
    bool positiveVariance = false;
};
TORCH_MODULE(GaussianHead);

// A derived feature, the seconds per click of a session: duration (column 0) divided by clicks
// (column 1), appended to the other features. A session without a click divides a positive
// duration by 0: +Inf. The fix counts at least one click, max(clicks, 1).
struct PerClickFeatureImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x)
    {
        const at::Tensor clicks = x.select(1, 1).unsqueeze(1);
        const at::Tensor perClick = x.select(1, 0).unsqueeze(1) / (atLeastOne ? clicks.clamp_min(1.0) : clicks);
        return torch::cat({x.slice(1, 2), perClick}, 1);
    }
    bool atLeastOne = false;
};
TORCH_MODULE(PerClickFeature);

// softmax followed, with the fix, by a floor on the probabilities so that log() sees no 0.
struct FlooredSoftmaxImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor &x)
    {
        const at::Tensor p = torch::softmax(x, 1);
        return floor ? p.clamp_min(*floor) : p;
    }
    std::optional<double> floor;
};
TORCH_MODULE(FlooredSoftmax);

}  // namespace nanscope::scenario_modules
