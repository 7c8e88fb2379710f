#include "model_api/run_setup.h"

#include <torch/torch.h>

#include <stdexcept>

namespace nanscope {

at::Tensor computeLoss(LossKind kind, const at::Tensor &output, const at::Tensor &target)
{
    namespace F = torch::nn::functional;
    switch (kind) {
    case LossKind::CrossEntropy:
        if (output.dim() > 2)  // [batch, ..., classes]: classes along the last dimension
            return F::cross_entropy(output.reshape({-1, output.size(-1)}), target.reshape({-1}));
        return F::cross_entropy(output, target);
    case LossKind::Mse: return F::mse_loss(output, target);
    case LossKind::NegLogOfProbabilities: {
        // -(t * log p) with one-hot t, as written by hand: 0 * log(0) = 0 * -Inf = NaN.
        const at::Tensor oneHot = F::one_hot(target, output.size(1)).to(output.scalar_type());
        return -(oneHot * torch::log(output)).sum(1).mean();
    }
    case LossKind::NegLogOfLogProbabilities: {
        const at::Tensor oneHot = F::one_hot(target, output.size(1)).to(output.scalar_type());
        return -(oneHot * output).sum(1).mean();
    }
    case LossKind::GaussianNll: {
        // Written out as in a paper, as users do: no clamp of the standard deviation.
        const at::Tensor mean = output.select(1, 0).unsqueeze(1), std = output.select(1, 1).unsqueeze(1);
        return (torch::log(std) + (target - mean).pow(2) / (2 * std * std)).mean();
    }
    case LossKind::ModelOwn: return output.reshape({});
    }
    throw std::logic_error("unknown loss");
}

}  // namespace nanscope
