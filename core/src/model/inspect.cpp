#include "nanscope/inspect.h"

#include "model/model_setup.h"
#include "model/torchscript_loader.h"
#include "model/torchscript_model.h"
#include "training/trainer.h"

namespace nanscope {

InspectReport inspectModel(const RunConfig &config)
{
    if (config.modelPath.empty())
        throw std::invalid_argument("inspect needs a TorchScript file");
    RunSetup setup = buildModelSetup(config);
    InspectReport report;
    report.loadMillis = setup.loadMillis;
    report.instrumentMillis = setup.instrumentMillis;
    if (auto *ts = dynamic_cast<TorchScriptModel *>(setup.model.get()))
        report.nonFiniteState = scanNonFiniteState(ts->module());
    RunConfig c = config;
    c.snapshotEvery = 1 << 30;
    Trainer trainer(std::move(setup), c);
    report.layers = trainer.layers();
    // computeStep() runs forward, loss and backward with the map (and the op-level tier on a
    // non-finite step) and stops before any update: the model is left as loaded.
    report.record = *trainer.computeStep();
    return report;
}

}  // namespace nanscope
