#include "run/stretch_read.h"

#include "nanscope/run_file.h"

#include <algorithm>

namespace nanscope {

namespace {

// About 34 MiB of map cells (MapCell is 56 bytes), whatever the model's width.
constexpr std::size_t kStretchMapCells = 600000;
constexpr std::size_t kMaxColumns = 1024;
constexpr std::size_t kMinColumns = 128;
constexpr std::size_t kSeriesBuckets = 2048;
constexpr int kStepsPerRead = 256;
constexpr int kChunksPerRead = 64;

// Appends the pieces `read(after, before, count)` returns from the one holding `next` up to the
// one holding `last`, each piece `steps` steps long; `next` becomes the step after the last one
// appended. False when cancelled.
template <typename Read>
bool appendPieces(RunStore &store, int &next, int last, int steps, const Read &read,
                  const std::function<bool()> &cancelled)
{
    for (;;) {
        if (cancelled && cancelled())
            return false;
        const std::vector<StepChunkPtr> pieces = read(next / steps - 1, last / steps + 1, kChunksPerRead);
        for (const StepChunkPtr &c : pieces) {
            store.appendChunk(*c);
            next = c->lastStep + 1;
        }
        // Past the file's last piece, the finer level reads from `next` on.
        if (int(pieces.size()) < kChunksPerRead || next > last)
            return true;
    }
}

}  // namespace

std::size_t stretchMapColumns(std::size_t layers)
{
    const std::size_t cells = std::max<std::size_t>(1, layers) * kLayerHealthKinds;
    return std::clamp(kStretchMapCells / cells, kMinColumns, kMaxColumns);
}

StretchLevel stretchLevel(int steps, std::size_t layers)
{
    const std::size_t pieces = std::min(kSeriesBuckets, 4 * stretchMapColumns(layers));
    if (std::size_t(std::max(steps, 0)) <= pieces)
        return StretchLevel::Steps;
    if (std::size_t(steps) <= pieces * kChunkSteps)
        return StretchLevel::Chunks;
    return StretchLevel::CoarseChunks;
}

std::shared_ptr<RunStore> stretchStore(const RunStore &whole)
{
    auto store = std::make_shared<RunStore>(kSeriesBuckets, stretchMapColumns(whole.layers().size()));
    store->reset(whole.layers());
    store->copyMarks(whole);
    return store;
}

bool readStretch(const RunFile &file, RunStore &store, int firstStep, int lastStep, StretchLevel level,
                 const std::function<bool()> &cancelled)
{
    int next = std::max(0, firstStep);
    if (level == StretchLevel::CoarseChunks &&
        !appendPieces(
            store, next, lastStep, kCoarseChunkSteps,
            [&](int after, int before, int count) { return file.readCoarseChunks(after, before, count); }, cancelled))
        return false;
    if (level != StretchLevel::Steps && next <= lastStep &&
        !appendPieces(
            store, next, lastStep, kChunkSteps,
            [&](int after, int before, int count) { return file.readChunks(after, before, count); }, cancelled))
        return false;
    StepChunkPtr chunk;  // a thinned step's layers are its chunk's
    while (next <= lastStep) {
        if (cancelled && cancelled())
            return false;
        const std::vector<StepRecordPtr> steps = file.readSteps(next - 1, kStepsPerRead);
        for (const StepRecordPtr &r : steps) {
            if (r->step > lastStep)
                return true;
            store.append(*withChunkLayers(file, r, &chunk));
            next = r->step + 1;
        }
        if (int(steps.size()) < kStepsPerRead)
            break;
    }
    return true;
}

std::vector<SeriesBucket> withStretch(const std::vector<SeriesBucket> &whole, const DecimatedSeries *stretch)
{
    if (!stretch || stretch->buckets().empty())
        return whole;
    const std::vector<SeriesBucket> &inner = stretch->buckets();
    const int first = inner.front().firstStep, last = inner.back().lastStep;
    std::vector<SeriesBucket> buckets;
    buckets.reserve(whole.size() + inner.size());
    // A bucket is drawn at its first step: one that begins before the stretch stays (it fills the
    // plot up to the stretch's edge), one that begins inside it gives way.
    auto b = whole.begin();
    for (; b != whole.end() && b->firstStep < first; ++b)
        buckets.push_back(*b);
    buckets.insert(buckets.end(), inner.begin(), inner.end());
    for (; b != whole.end(); ++b)
        if (b->firstStep > last)
            buckets.push_back(*b);
    return buckets;
}

}  // namespace nanscope
