#include "nanscope/step_chunk.h"

#include "nanscope/health_kinds.h"

#include <algorithm>
#include <cmath>

namespace nanscope {

const char *seriesName(Series s)
{
    switch (s) {
    case Series::Loss: return "loss";
    case Series::GradNorm: return "grad_norm";
    case Series::GradNormClipped: return "grad_norm_clipped";
    case Series::LearningRate: return "lr";
    case Series::LossScale: return "loss_scale";
    }
    return "loss";
}

double seriesValue(const StepRecord &r, Series s)
{
    switch (s) {
    case Series::Loss: return r.loss;
    case Series::GradNorm: return r.gradNorm;
    case Series::GradNormClipped: return r.gradNormClipped;
    case Series::LearningRate: return r.learningRate;
    case Series::LossScale: return r.lossScale;
    }
    return r.loss;
}

SeriesBucket SeriesBucket::of(int step, double value)
{
    SeriesBucket b;
    b.firstStep = b.lastStep = step;
    b.count = 1;
    if (std::isfinite(value)) {
        b.finiteCount = 1;
        b.min = b.max = value;
    } else {
        b.firstNonFiniteStep = step;
        b.firstNonFiniteValue = value;
    }
    return b;
}

void SeriesBucket::fold(const SeriesBucket &later)
{
    if (later.count == 0)
        return;
    if (count == 0) {
        *this = later;
        return;
    }
    if (later.finiteCount > 0) {
        min = finiteCount > 0 ? std::min(min, later.min) : later.min;
        max = finiteCount > 0 ? std::max(max, later.max) : later.max;
    }
    if (!hasNonFinite() && later.hasNonFinite()) {
        firstNonFiniteStep = later.firstNonFiniteStep;
        firstNonFiniteValue = later.firstNonFiniteValue;
    }
    lastStep = later.lastStep;
    count += later.count;
    finiteCount += later.finiteCount;
}

MapCell MapCell::of(const TensorHealth &h, int step)
{
    MapCell c;
    c.present = h.present;
    c.step = step;
    c.numel = h.numel;
    c.nan = h.nan;
    c.posInf = h.posInf;
    c.negInf = h.negInf;
    c.absMax = std::isfinite(h.absMax) ? h.absMax : 0.0;
    c.norm = std::isfinite(h.finiteL2) ? h.finiteL2 : 0.0;
    return c;
}

// On a tie the earlier cell stays, so the first bad step shows; folding is associative, so
// chunks folded together equal their steps folded one by one.
void MapCell::fold(const MapCell &later)
{
    if (!later.present)
        return;
    if (!present) {
        *this = later;
        return;
    }
    const double largest = std::max(absMax, later.absMax), largestNorm = std::max(norm, later.norm);
    if (later.fraction() > fraction())
        *this = later;
    absMax = largest;
    norm = largestNorm;
}

static_assert(kHealthKinds.size() == std::size_t(kLayerHealthKinds));

std::array<const TensorHealth *, kLayerHealthKinds> healthKinds(const LayerHealth &h)
{
    std::array<const TensorHealth *, kLayerHealthKinds> kinds{};
    for (std::size_t k = 0; k < kinds.size(); ++k)
        kinds[k] = &(h.*kHealthKinds[k].member);
    return kinds;
}

double largestUpdateRatio(double a, double b)
{
    if (std::isnan(a))
        return b;
    return std::isnan(b) ? a : std::max(a, b);
}

StepChunk::StepChunk(int chunkIndex, std::size_t layerCount)
    : index(chunkIndex), tally(layerCount), layers(layerCount)
{
}

void StepChunk::add(const StepRecord &r)
{
    if (tally.steps == 0)
        firstStep = r.step;
    lastStep = r.step;
    tally.add(r);
    for (int s = 0; s < kSeriesCount; ++s)
        series[std::size_t(s)].fold(SeriesBucket::of(r.step, seriesValue(r, Series(s))));
    if (r.skipped)
        skipped.fold(SeriesBucket::of(r.step, r.lossScale));
    const std::size_t n = std::min(layers.size(), r.layers.size());
    for (std::size_t l = 0; l < n; ++l) {
        LayerPart &part = layers[l];
        const LayerHealth &h = r.layers[l];
        const auto kinds = healthKinds(h);
        for (int k = 0; k < kLayerHealthKinds; ++k)
            part.cells[std::size_t(k)].fold(MapCell::of(*kinds[std::size_t(k)], r.step));
        part.updateRatio = largestUpdateRatio(part.updateRatio, h.updateRatio);
        if (h.nonFinite() && part.firstNonFinite < 0)
            part.firstNonFinite = r.step;
    }
    const int born = r.bornInLayer();
    if (born >= 0 && std::size_t(born) < layers.size() && layers[std::size_t(born)].firstProduced < 0)
        layers[std::size_t(born)].firstProduced = r.step;
}

void StepChunk::fold(const StepChunk &later)
{
    if (later.tally.steps == 0)
        return;
    if (tally.steps == 0)
        firstStep = later.firstStep;
    lastStep = later.lastStep;
    tally.add(later.tally);
    for (int s = 0; s < kSeriesCount; ++s)
        series[std::size_t(s)].fold(later.series[std::size_t(s)]);
    skipped.fold(later.skipped);
    if (layers.size() < later.layers.size())
        layers.resize(later.layers.size());
    for (std::size_t l = 0; l < later.layers.size(); ++l) {
        LayerPart &part = layers[l];
        const LayerPart &next = later.layers[l];
        for (int k = 0; k < kLayerHealthKinds; ++k)
            part.cells[std::size_t(k)].fold(next.cells[std::size_t(k)]);
        part.updateRatio = largestUpdateRatio(part.updateRatio, next.updateRatio);
        if (part.firstNonFinite < 0)
            part.firstNonFinite = next.firstNonFinite;
        if (part.firstProduced < 0)
            part.firstProduced = next.firstProduced;
    }
}

std::vector<LayerHealth> layersFromChunk(const StepChunk &chunk)
{
    std::vector<LayerHealth> layers(chunk.layers.size());
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const StepChunk::LayerPart &part = chunk.layers[i];
        TensorHealth *kinds[kLayerHealthKinds] = {&layers[i].forward, &layers[i].grad, &layers[i].params,
                                                  &layers[i].paramGrads};  // LayerHealth's order, as healthKinds()
        for (int k = 0; k < kLayerHealthKinds; ++k) {
            const MapCell &cell = part.cells[std::size_t(k)];
            TensorHealth &h = *kinds[k];
            h.present = cell.present;
            if (!cell.present)
                continue;
            h.numel = cell.numel;
            h.absMax = h.max = cell.absMax;
            h.min = -cell.absMax;
            h.finiteL2 = cell.norm;
        }
        layers[i].updateRatio = part.updateRatio;
    }
    return layers;
}

}  // namespace nanscope
