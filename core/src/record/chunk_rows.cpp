#include "record/chunk_rows.h"

#include "record/run_file_json.h"
#include "record/run_file_schema.h"

#include <cmath>
#include <string>

namespace nanscope::record {

namespace {

void bindBucket(Statement &s, int chunk, const char *name, const SeriesBucket &b)
{
    s.bind(1, chunk).bind(2, std::string(name)).bind(3, b.firstStep).bind(4, b.lastStep);
    s.bind(5, b.count).bind(6, b.finiteCount);
    if (b.finiteCount > 0)
        s.bind(7, b.min).bind(8, b.max);
    if (b.hasNonFinite())
        s.bind(9, b.firstNonFiniteStep).bind(10, b.firstNonFiniteValue);
    s.run();
}

SeriesBucket readBucket(const Statement &s, int first)
{
    SeriesBucket b;
    b.firstStep = int(s.integer(first));
    b.lastStep = int(s.integer(first + 1));
    b.count = int(s.integer(first + 2));
    b.finiteCount = int(s.integer(first + 3));
    if (b.finiteCount > 0) {
        b.min = s.real(first + 4);
        b.max = s.real(first + 5);
    }
    if (!s.isNull(first + 6)) {
        b.firstNonFiniteStep = int(s.integer(first + 6));
        b.firstNonFiniteValue = s.real(first + 7);  // NULL (NaN) or an infinity
    }
    return b;
}

// The columns of a cell: step, numel, nan, posinf, neginf, absmax; all NULL when absent. After
// the four cells: the update ratio, then the four cells' norms (columns files of the first
// release lack: they read as no update and norm 0).
constexpr int kCellColumns = 6;
constexpr int kFirstCell = 5;
constexpr int kUpdateRatioColumn = kFirstCell + kLayerHealthKinds * kCellColumns;
constexpr int kFirstNormColumn = kUpdateRatioColumn + 1;
constexpr int kChunkLayerColumns = kFirstNormColumn + kLayerHealthKinds;

void bindCell(Statement &s, int first, const MapCell &c)
{
    if (!c.present)
        return;  // the bindings were cleared: NULL
    s.bind(first, c.step).bind(first + 1, c.numel).bind(first + 2, c.nan).bind(first + 3, c.posInf);
    s.bind(first + 4, c.negInf).bind(first + 5, c.absMax);
}

MapCell readCell(const Statement &s, int first)
{
    MapCell c;
    if (s.isNull(first + 1))
        return c;
    c.present = true;
    c.step = int(s.integer(first));
    c.numel = s.integer(first + 1);
    c.nan = s.integer(first + 2);
    c.posInf = s.integer(first + 3);
    c.negInf = s.integer(first + 4);
    c.absMax = s.real(first + 5);
    return c;
}

// The level's table name: "chunks" or "coarse_chunks".
std::string table(ChunkLevel level, const char *name)
{
    return (level == ChunkLevel::Coarse ? std::string("coarse_") : std::string()) + name;
}

void bindOptionalStep(Statement &s, int i, int step)
{
    if (step >= 0)
        s.bind(i, step);
}

}  // namespace

void writeChunk(Database &db, const StepChunk &c, ChunkLevel level)
{
    Statement chunk = db.prepare("INSERT OR REPLACE INTO " + table(level, "chunks") + " (chunk, first_step, last_step, steps, "
                                 "first_origin_step, nonfinite_steps, rollbacks, scaler_skipped_steps, step_ms, "
                                 "quarantined) VALUES (?,?,?,?,?,?,?,?,?,?)");
    const StepTally &t = c.tally;
    chunk.bind(1, c.index).bind(2, c.firstStep).bind(3, c.lastStep).bind(4, t.steps);
    if (t.firstOrigin.valid())
        chunk.bind(5, t.firstOrigin.step);
    chunk.bind(6, t.nonFiniteSteps).bind(7, t.rollbacks).bind(8, t.scalerSkippedSteps).bind(9, t.stepMillis);
    chunk.bindText(10, indexListText(t.quarantined));
    chunk.run();

    Statement series = db.prepare("INSERT OR REPLACE INTO " + table(level, "chunk_series") + " VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (int s = 0; s < kSeriesCount; ++s)
        bindBucket(series, c.index, seriesName(Series(s)), c.series[std::size_t(s)]);
    if (c.skipped.count > 0)
        bindBucket(series, c.index, kSkippedSeries, c.skipped);

    std::string values = "?";
    for (int i = 1; i < kChunkLayerColumns; ++i)
        values += ",?";
    Statement layer = db.prepare("INSERT OR REPLACE INTO " + table(level, "chunk_layers") + " VALUES (" + values + ")");
    for (std::size_t l = 0; l < c.layers.size(); ++l) {
        const StepChunk::LayerPart &p = c.layers[l];
        layer.bind(1, c.index).bind(2, std::int64_t(l));
        bindOptionalStep(layer, 3, p.firstNonFinite);
        bindOptionalStep(layer, 4, p.firstProduced);
        layer.bind(5, l < t.nonFiniteStepsPerLayer.size() ? t.nonFiniteStepsPerLayer[l] : 0);
        for (int k = 0; k < kLayerHealthKinds; ++k)
            bindCell(layer, kFirstCell + 1 + k * kCellColumns, p.cells[std::size_t(k)]);
        if (!std::isnan(p.updateRatio))
            layer.bind(kUpdateRatioColumn + 1, p.updateRatio);
        for (int k = 0; k < kLayerHealthKinds; ++k)
            if (p.cells[std::size_t(k)].present)
                layer.bind(kFirstNormColumn + 1 + k, p.cells[std::size_t(k)].norm);
        layer.run();
    }
}

bool hasChunkTables(Database &db, ChunkLevel level)
{
    return db.singleInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('" +
                        table(level, "chunks") + "', '" + table(level, "chunk_series") + "', '" +
                        table(level, "chunk_layers") + "')") == 3;
}

std::vector<StepChunkPtr> readChunks(Database &db, int afterChunk, int beforeChunk, int maxCount,
                                     const std::vector<Layer> &layers, int run, ChunkLevel level)
{
    std::vector<std::shared_ptr<StepChunk>> out;
    Statement c = db.prepare(
        "SELECT c.chunk, c.first_step, c.last_step, c.steps, c.nonfinite_steps, c.rollbacks, "
        "c.scaler_skipped_steps, c.step_ms, c.quarantined, c.first_origin_step, s.origin_phase, s.origin_layer, "
        "s.origin_op, s.origin_source, s.origin_produced, s.origin_explanation FROM " + table(level, "chunks") + " c LEFT JOIN steps s "
        "ON s.step = c.first_origin_step WHERE c.chunk > ? AND c.chunk < ? ORDER BY c.chunk LIMIT ?");
    c.bind(1, afterChunk).bind(2, beforeChunk).bind(3, maxCount);
    while (c.step()) {
        auto chunk = std::make_shared<StepChunk>(int(c.integer(0)), layers.size());
        chunk->run = run;
        chunk->firstStep = int(c.integer(1));
        chunk->lastStep = int(c.integer(2));
        StepTally &t = chunk->tally;
        t.steps = int(c.integer(3));
        t.nonFiniteSteps = int(c.integer(4));
        t.rollbacks = int(c.integer(5));
        t.scalerSkippedSteps = int(c.integer(6));
        if (t.steps <= 0 || chunk->lastStep < chunk->firstStep)
            continue;  // damaged: a chunk of no steps
        t.stepMillis = c.isNull(7) ? 0.0 : c.real(7);
        t.quarantined = indexListFrom(c.text(8));
        if (!c.isNull(9))
            t.firstOrigin = readOrigin(c, 10, int(c.integer(9)), layers);
        out.push_back(std::move(chunk));
    }
    if (out.empty())
        return {};
    const int first = out.front()->index, last = out.back()->index;
    // Chunk numbers are unique and in order: a row finds its chunk by its offset from the first.
    std::vector<StepChunk *> byIndex(std::size_t(last - first + 1), nullptr);
    for (const auto &ch : out)
        byIndex[std::size_t(ch->index - first)] = ch.get();
    const auto find = [&](std::int64_t index) -> StepChunk * {
        return index < first || index > last ? nullptr : byIndex[std::size_t(index - first)];
    };

    Statement s =
        db.prepare("SELECT chunk, series, first_step, last_step, count, finite, min, max, "
                   "first_nonfinite_step, first_nonfinite_value FROM " + table(level, "chunk_series") + " WHERE chunk BETWEEN ? AND ?");
    s.bind(1, first).bind(2, last);
    while (s.step()) {
        StepChunk *ch = find(s.integer(0));
        if (!ch)
            continue;
        const std::string name = s.text(1);
        SeriesBucket *b = name == kSkippedSeries ? &ch->skipped : nullptr;
        for (int i = 0; i < kSeriesCount && !b; ++i)
            if (name == seriesName(Series(i)))
                b = &ch->series[std::size_t(i)];
        const SeriesBucket read = readBucket(s, 2);
        if (b && read.count > 0 && read.finiteCount >= 0 && read.finiteCount <= read.count)
            *b = read;
    }
    for (const auto &ch : out)
        ch->tally.skippedSteps = ch->skipped.count;

    Statement l = db.prepare("SELECT * FROM " + table(level, "chunk_layers") + " WHERE chunk BETWEEN ? AND ?");
    l.bind(1, first).bind(2, last);
    const bool norms = l.columnCount() >= kChunkLayerColumns;  // files of the first release lack them
    while (l.step()) {
        StepChunk *ch = find(l.integer(0));
        const std::int64_t layer = l.integer(1);
        if (!ch || layer < 0 || layer >= std::int64_t(ch->layers.size()))
            continue;  // damaged: nothing to attach it to
        StepChunk::LayerPart &p = ch->layers[std::size_t(layer)];
        p.firstNonFinite = l.isNull(2) ? -1 : int(l.integer(2));
        p.firstProduced = l.isNull(3) ? -1 : int(l.integer(3));
        ch->tally.nonFiniteStepsPerLayer[std::size_t(layer)] = int(l.integer(4));
        for (int k = 0; k < kLayerHealthKinds; ++k)
            p.cells[std::size_t(k)] = readCell(l, kFirstCell + k * kCellColumns);
        if (norms) {
            p.updateRatio = l.real(kUpdateRatioColumn);
            for (int k = 0; k < kLayerHealthKinds; ++k)
                if (!l.isNull(kFirstNormColumn + k))
                    p.cells[std::size_t(k)].norm = l.real(kFirstNormColumn + k);
        }
    }
    return {out.begin(), out.end()};
}

}  // namespace nanscope::record
