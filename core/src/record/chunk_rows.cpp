#include "record/chunk_rows.h"

#include "record/chunk_columns.h"
#include "record/run_file_json.h"
#include "record/run_file_schema.h"

#include <string>

namespace nanscope::record {

namespace {

// The level's table name: "chunks" or "coarse_chunks".
std::string table(ChunkLevel level, const char *name)
{
    return (level == ChunkLevel::Coarse ? std::string("coarse_") : std::string()) + name;
}

template <typename Row>
Statement insertInto(Database &db, const std::string &name, const std::vector<ChunkColumn<Row>> &columns)
{
    std::string marks;
    for (std::size_t i = 0; i < columns.size(); ++i)
        marks += i ? ",?" : "?";
    return db.prepare("INSERT OR REPLACE INTO " + name + " (" + columnNames(columns) + ") VALUES (" + marks + ")");
}

template <typename Row>
void insert(Statement &s, const std::vector<ChunkColumn<Row>> &columns, const Row &row)
{
    for (std::size_t i = 0; i < columns.size(); ++i)
        columns[i].bind(s, int(i) + 1, row);
    s.run();
}

// The columns of `columns` the file's `name` table has: an earlier layout lacks the newer ones
// (the first release's chunk_layers has no update ratio and norms), whose values keep their defaults.
template <typename Row>
std::vector<const ChunkColumn<Row> *> readable(Database &db, const std::string &name,
                                               const std::vector<ChunkColumn<Row>> &columns)
{
    std::vector<const ChunkColumn<Row> *> out;
    Statement has = db.prepare("SELECT count(*) FROM pragma_table_info(?) WHERE name = ?");
    for (const auto &c : columns) {
        has.reset();
        has.bind(1, name).bind(2, c.name);
        if (has.step() && has.integer(0) > 0)
            out.push_back(&c);
    }
    return out;
}

template <typename Row>
std::string namesOf(const std::vector<const ChunkColumn<Row> *> &columns)
{
    std::string out;
    for (const auto *c : columns)
        out += (out.empty() ? "" : ", ") + c->name;
    return out;
}

template <typename Row>
void readRow(const Statement &s, const std::vector<const ChunkColumn<Row> *> &columns, Row &row)
{
    for (std::size_t i = 0; i < columns.size(); ++i)
        columns[i]->read(s, int(i), row);
}

}  // namespace

void writeChunk(Database &db, const StepChunk &c, ChunkLevel level)
{
    Statement chunk = insertInto(db, table(level, "chunks"), chunkTableColumns());
    insert(chunk, chunkTableColumns(), c);

    Statement series = insertInto(db, table(level, "chunk_series"), chunkSeriesColumns());
    for (int s = 0; s < kSeriesCount; ++s)
        insert(series, chunkSeriesColumns(), ChunkSeriesRow{c.index, seriesName(Series(s)), c.series[std::size_t(s)]});
    if (c.skipped.count > 0)
        insert(series, chunkSeriesColumns(), ChunkSeriesRow{c.index, kSkippedSeries, c.skipped});

    Statement layer = insertInto(db, table(level, "chunk_layers"), chunkLayerColumns());
    const StepTally &t = c.tally;
    for (std::size_t l = 0; l < c.layers.size(); ++l) {
        const int nonFinite = l < t.nonFiniteStepsPerLayer.size() ? t.nonFiniteStepsPerLayer[l] : 0;
        insert(layer, chunkLayerColumns(), ChunkLayerRow{c.index, int(l), nonFinite, c.layers[l]});
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
    const auto chunkColumns = readable(db, table(level, "chunks"), chunkTableColumns());
    std::string qualified;
    for (const auto *col : chunkColumns)
        qualified += "c." + col->name + ", ";
    Statement c = db.prepare(
        "SELECT c.chunk, c.first_origin_step, " + qualified + "s.origin_phase, s.origin_layer, s.origin_op, "
        "s.origin_source, s.origin_produced, s.origin_explanation FROM " + table(level, "chunks") + " c LEFT JOIN steps s "
        "ON s.step = c.first_origin_step WHERE c.chunk > ? AND c.chunk < ? ORDER BY c.chunk LIMIT ?");
    c.bind(1, afterChunk).bind(2, beforeChunk).bind(3, maxCount);
    const int originAt = 2 + int(chunkColumns.size());
    while (c.step()) {
        auto chunk = std::make_shared<StepChunk>(int(c.integer(0)), layers.size());
        chunk->run = run;
        for (std::size_t i = 0; i < chunkColumns.size(); ++i)
            chunkColumns[i]->read(c, int(i) + 2, *chunk);
        const StepTally &t = chunk->tally;
        if (t.steps <= 0 || chunk->lastStep < chunk->firstStep)
            continue;  // damaged: a chunk of no steps
        if (!c.isNull(1))
            chunk->tally.firstOrigin = readOrigin(c, originAt, int(c.integer(1)), layers);
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

    const auto seriesColumns = readable(db, table(level, "chunk_series"), chunkSeriesColumns());
    Statement s = db.prepare("SELECT " + namesOf(seriesColumns) + " FROM " + table(level, "chunk_series") +
                             " WHERE chunk BETWEEN ? AND ?");
    s.bind(1, first).bind(2, last);
    while (s.step()) {
        ChunkSeriesRow row;
        readRow(s, seriesColumns, row);
        StepChunk *ch = find(row.chunk);
        if (!ch)
            continue;
        SeriesBucket *b = row.series == kSkippedSeries ? &ch->skipped : nullptr;
        for (int i = 0; i < kSeriesCount && !b; ++i)
            if (row.series == seriesName(Series(i)))
                b = &ch->series[std::size_t(i)];
        const SeriesBucket &read = row.bucket;
        if (b && read.count > 0 && read.finiteCount >= 0 && read.finiteCount <= read.count)
            *b = read;
    }
    for (const auto &ch : out)
        ch->tally.skippedSteps = ch->skipped.count;

    const auto layerColumns = readable(db, table(level, "chunk_layers"), chunkLayerColumns());
    Statement l = db.prepare("SELECT " + namesOf(layerColumns) + " FROM " + table(level, "chunk_layers") +
                             " WHERE chunk BETWEEN ? AND ?");
    l.bind(1, first).bind(2, last);
    while (l.step()) {
        ChunkLayerRow row;
        readRow(l, layerColumns, row);
        StepChunk *ch = find(row.chunk);
        if (!ch || row.layer < 0 || row.layer >= int(ch->layers.size()))
            continue;  // damaged: nothing to attach it to
        ch->layers[std::size_t(row.layer)] = row.part;
        ch->tally.nonFiniteStepsPerLayer[std::size_t(row.layer)] = row.nonFiniteSteps;
    }
    return {out.begin(), out.end()};
}

}  // namespace nanscope::record
