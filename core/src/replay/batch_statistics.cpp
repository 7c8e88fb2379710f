#include "replay/batch_statistics.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>

namespace nanscope {

namespace {

at::Tensor bufferNamed(const ModelAdapter &model, int layer, const std::string &name)
{
    for (const auto &b : model.layerBuffers(layer))
        if (b.first == name)
            return b.second;
    return {};
}

struct Running {
    at::Tensor mean, var;
};

}  // namespace

std::vector<BatchStatistic>
measureBatchStatistics(ModelAdapter &model, const StepRecord &step,
                       const std::function<void(const std::function<void()> &)> &computeStep)
{
    std::vector<int> layers;
    for (const Layer &l : model.layers())
        if (l.type.rfind("BatchNorm", 0) == 0 && bufferNamed(model, l.id, "running_mean").defined() &&
            bufferNamed(model, l.id, "running_var").defined())
            layers.push_back(l.id);
    if (layers.empty())
        return {};
    // Training mode moves running <- (1 - m) running + m batch, m the momentum (1 / (tracked + 1)
    // without one). Two passes, from 0 and from 1, give m and the batch's statistics whatever a
    // layer's momentum is, for the layers of a C++ model and of a TorchScript file alike.
    auto pass = [&](double start) {
        computeStep([&] {
            at::NoGradGuard noGrad;
            for (int id : layers) {
                bufferNamed(model, id, "running_mean").fill_(start);
                bufferNamed(model, id, "running_var").fill_(start);
                at::Tensor tracked = bufferNamed(model, id, "num_batches_tracked");
                if (tracked.defined())
                    tracked.zero_();
            }
        });
        std::vector<Running> after;
        for (int id : layers)
            after.push_back({bufferNamed(model, id, "running_mean").clone().to(at::kDouble),
                             bufferNamed(model, id, "running_var").clone().to(at::kDouble)});
        return after;
    };
    const std::vector<Running> fromZero = pass(0.0), fromOne = pass(1.0);
    std::vector<BatchStatistic> out;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Running &z = fromZero[i], &o = fromOne[i];
        if (z.mean.eq(0).all().item<bool>() && o.mean.eq(1).all().item<bool>() && z.var.eq(0).all().item<bool>() &&
            o.var.eq(1).all().item<bool>())
            continue;  // eval mode: the buffers did not move, the layer couples nothing
        BatchStatistic s;
        s.layer = layers[i];
        s.path = model.layers()[std::size_t(s.layer)].path;
        // One momentum for the layer, read where the two passes round least (the smallest values).
        const at::Tensor perChannel = (1.0 - (o.mean - z.mean)).flatten();
        const at::Tensor size =
            (z.mean.abs() + o.mean.abs()).flatten().masked_fill(at::isfinite(perChannel).logical_not(), INFINITY);
        const double momentum = perChannel[size.argmin().item<std::int64_t>()].item<double>();
        const std::int64_t channels = z.mean.numel();
        const std::int64_t values = channels > 0 && std::size_t(s.layer) < step.layers.size()
                                        ? step.layers[std::size_t(s.layer)].forward.numel / channels
                                        : 0;
        s.mean = z.mean / momentum;
        // The running variance is the unbiased one; training mode normalises with the biased.
        s.var = values > 1 ? z.var / momentum * (double(values - 1) / double(values)) : z.var / momentum;
        s.finite = momentum > 0 && at::isfinite(s.mean).all().item<bool>() && at::isfinite(s.var).all().item<bool>();
        const at::Tensor own = bufferNamed(model, s.layer, "running_mean");
        s.mean = s.mean.to(own.scalar_type());
        s.var = s.var.to(own.scalar_type());
        out.push_back(s);
    }
    return out;
}

void holdBatchStatistics(ModelAdapter &model, const std::vector<BatchStatistic> &statistics)
{
    at::NoGradGuard noGrad;
    for (const BatchStatistic &s : statistics) {
        if (!s.finite)
            continue;
        bufferNamed(model, s.layer, "running_mean").copy_(s.mean);
        bufferNamed(model, s.layer, "running_var").copy_(s.var);
        model.setLayerTraining(s.layer, false);
    }
}

void releaseBatchStatistics(ModelAdapter &model, const std::vector<BatchStatistic> &statistics)
{
    for (const BatchStatistic &s : statistics)
        if (s.finite)
            model.setLayerTraining(s.layer, true);
}

}  // namespace nanscope
