#pragma once
// Steps folded into buckets: the one definition of how a plot keeps a series (SeriesBucket), how
// the NaN map keeps a layer's cell (MapCell), and of a StepChunk, the fold of kChunkSteps
// consecutive steps that a run file stores beside its steps. A window opening a long run reads
// the chunks instead of every step and gets the same plots, map and tree (docs/run-file.md).
#include "nanscope/records.h"
#include "nanscope/step_tally.h"

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace nanscope {

enum class Series { Loss, GradNorm, GradNormClipped, LearningRate, LossScale };
constexpr int kSeriesCount = 5;
const char *seriesName(Series s);  // "loss", "grad_norm", ... as a run file spells it
double seriesValue(const StepRecord &record, Series s);

// Consecutive values of a series: the minimum, the maximum and the first NaN or Inf.
struct SeriesBucket {
    int firstStep = 0;
    int lastStep = 0;
    int count = 0;  // values folded into this bucket
    int finiteCount = 0;
    double min = 0.0;  // over the finite values (meaningless when finiteCount == 0)
    double max = 0.0;
    int firstNonFiniteStep = -1;  // -1: every value was finite
    double firstNonFiniteValue = 0.0;

    static SeriesBucket of(int step, double value);
    bool hasNonFinite() const { return firstNonFiniteStep >= 0; }
    void fold(const SeriesBucket &later);
};

// One layer's health of one kind over some steps: the worst step (the largest non-finite
// fraction, the earliest on a tie) with its counts, and the largest finite magnitude of any step.
struct MapCell {
    bool present = false;  // something was observed (a layer with no parameters has none)
    int step = -1;         // the step these counts come from
    std::int64_t numel = 0;
    std::int64_t nan = 0;
    std::int64_t posInf = 0;
    std::int64_t negInf = 0;
    double absMax = 0.0;  // the largest finite magnitude over every step the cell covers
    double norm = 0.0;    // the largest L2 norm (of the finite part) over those steps

    static MapCell of(const TensorHealth &health, int step);
    std::int64_t nonFinite() const { return nan + posInf + negInf; }
    double fraction() const { return numel > 0 ? double(nonFinite()) / double(numel) : 0.0; }
    void fold(const MapCell &later);
};

// The health kinds of a layer, in LayerHealth's order.
constexpr int kLayerHealthKinds = 4;
std::array<const TensorHealth *, kLayerHealthKinds> healthKinds(const LayerHealth &health);
// Update ratios fold to the largest; NaN (no update) gives way to any value.
double largestUpdateRatio(double a, double b);

// Steps a chunk covers: chunk i holds the steps i * kChunkSteps .. i * kChunkSteps + 63.
constexpr int kChunkSteps = 64;
inline int chunkOfStep(int step) { return step / kChunkSteps; }
// A coarse chunk folds 16 chunks (1,024 steps): a run file keeps both, so that a window opening a
// run of a million steps reads a thousand coarse chunks, not sixteen thousand chunks.
constexpr int kCoarseChunkChunks = 16;
constexpr int kCoarseChunkSteps = kCoarseChunkChunks * kChunkSteps;

// The fold of the records of one chunk's steps: what the window's plots, map and layer tree and a
// run's summary keep of them.
struct StepChunk {
    struct LayerPart {
        std::array<MapCell, kLayerHealthKinds> cells;
        int firstNonFinite = -1;  // the first step whose forward output or gradient was non-finite
        int firstProduced = -1;   // the first step whose non-finite value was born here (bornInLayer)
        double updateRatio = std::numeric_limits<double>::quiet_NaN();  // the largest of any step; NaN: none
    };

    int run = 0;  // as StepRecord::run
    int index = -1;
    int firstStep = 0;
    int lastStep = 0;
    StepTally tally;  // what the run's summary counts of these steps (tally.steps: records folded)
    std::array<SeriesBucket, kSeriesCount> series;
    SeriesBucket skipped;           // the loss scale of the steps whose update was not applied (count 0: none)
    std::vector<LayerPart> layers;  // by layer id

    StepChunk() = default;
    StepChunk(int index, std::size_t layerCount);
    void add(const StepRecord &record);
    // A later chunk of the same run: the fold of both, as if their steps had been added one by one.
    void fold(const StepChunk &later);
};
using StepChunkPtr = std::shared_ptr<const StepChunk>;

// The layers of a step whose run file kept no layer detail (LayerDetail::None), as its chunk
// tells them: finite, as such a step always is (a non-finite one keeps its detail), each kind's
// numel, its largest magnitude and norm over the chunk (min and max as -|max|, |max|), the
// chunk's largest update ratio.
std::vector<LayerHealth> layersFromChunk(const StepChunk &chunk);

}  // namespace nanscope
