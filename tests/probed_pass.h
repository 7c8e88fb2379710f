#pragma once
// Test helper: one probed forward pass of a model and the backward pass of sum(out^2), which
// reaches every layer without a loss function in the way. Needs core's internal headers.
#include "model_api/model_adapter.h"
#include "probe/probe.h"

#include <ATen/ATen.h>

#include <vector>

namespace nanscope::testing {

struct ProbedPass {
    at::Tensor output;
    std::vector<int> forwardOrder;
    std::int64_t hostElementsScanned = 0;
};

// Without `backward` the output comes back detached: no graph keeps the probe's hooks alive.
// `devicePathOnCpu`: see HealthCollector::setDevicePathOnCpu().
inline ProbedPass probedPass(ModelAdapter &model, const at::Tensor &x, StepRecord &record, bool backward = true,
                             bool devicePathOnCpu = false)
{
    Probe probe;
    probe.setDevicePathOnCpu(devicePathOnCpu);
    probe.beginStep(model, &record);
    ProbedPass p;
    p.output = model.forward(x, &probe);
    if (backward)
        p.output.pow(2).sum().backward();
    else
        p.output = p.output.detach();
    probe.finishStep();
    p.forwardOrder = probe.forwardOrder();
    p.hostElementsScanned = probe.hostElementsScanned();
    return p;
}

}  // namespace nanscope::testing
