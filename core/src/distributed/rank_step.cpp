#include "distributed/rank_step.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace nanscope {

namespace {

void clearNonFinite(TensorHealth &h) { h.nan = h.posInf = h.negInf = 0; }

bool among(const std::vector<int> &ranks, int r) { return std::find(ranks.begin(), ranks.end(), r) != ranks.end(); }

}  // namespace

RankFindings stepAcrossRanks(Trainer &trainer, RankSync &sync, StepRecord &record, BadRankPolicy policy,
                             std::vector<Event> &events, std::string &stopReason)
{
    const RankFindings found = sync.exchange(record, trainer.model(), trainer.layers().size());
    const int layer = found.rank == sync.rank() ? found.layer : -1;
    const std::string where = found.text(trainer.layers());
    if (!found.badRanks.empty() && (policy == BadRankPolicy::Skip || int(found.badRanks.size()) == sync.world())) {
        // No trace on any rank: discardStep() puts back the buffers the forward pass moved.
        sync.discardPending();
        trainer.discardStep(record, false);
        events.emplace_back(EventKind::Recovery, record.step, layer, EventMessage{"ranks-skipped", {where}});
        record.why = events.back().text;
        return found;
    }

    StepRecord applied = record;  // what every rank applies: the same numbers everywhere
    const double meanNorm = sync.divideGradients(sync.world() - int(found.badRanks.size()));
    // One rank applies its own gradient, whose norm the map measured: a 1-rank job is then a plain
    // run bit for bit (clipping scales by the same norm).
    applied.gradNorm = sync.world() == 1 ? record.gradNorm : meanNorm;
    double loss = 0;
    int counted = 0, root = -1;
    for (int r = 0; r < sync.world(); ++r)
        if (!among(found.badRanks, r)) {
            loss += found.losses[std::size_t(r)];
            ++counted;
            root = root < 0 ? r : root;
        }
    applied.loss = loss / counted;
    applied.origin = {};
    // The health of what is applied, the mean of the finite ranks' gradients, the same on every
    // rank: a step whose gradients overflowed under a loss scaler is not a failed step, so its Inf
    // reaches the sum, and the scaler must see it on every rank to skip the step and back off.
    const bool overflowed = !std::isfinite(meanNorm);
    for (std::size_t l = 0; l < applied.layers.size(); ++l) {
        LayerHealth &h = applied.layers[l];
        clearNonFinite(h.forward);
        clearNonFinite(h.grad);
        clearNonFinite(h.paramGrads);
        if (overflowed)
            for (const at::Tensor &p : trainer.model().layerParameters(int(l)))
                if (p.grad().defined() && !at::isfinite(p.grad()).all().item<bool>())
                    h.paramGrads.posInf = std::max<std::int64_t>(h.paramGrads.posInf, 1);
    }
    sync.shareBuffers(trainer.model(), root);  // the running statistics of a finite rank

    trainer.applyStep(applied, events, stopReason);
    record.skipped = applied.skipped;
    record.rolledBack = applied.rolledBack;
    record.zeroedGradients = applied.zeroedGradients;
    record.gradNormClipped = applied.gradNormClipped;
    record.overflowLayers = applied.overflowLayers;
    record.why = applied.why;
    for (std::size_t i = 0; i < record.layers.size() && i < applied.layers.size(); ++i)
        record.layers[i].updateRatio = applied.layers[i].updateRatio;
    if (!found.badRanks.empty()) {
        events.emplace_back(EventKind::Recovery, record.step, layer, EventMessage{"ranks-excluded", {where}});
        record.why = events.back().text;
    }
    return found;
}

}  // namespace nanscope
