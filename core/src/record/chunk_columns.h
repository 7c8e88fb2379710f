#pragma once
// The chunk tables (chunks, chunk_series, chunk_layers, and their coarse_ twins), defined once as
// the steps table is (step_columns.h): each column's name, its declaration and how a row's value
// goes in and comes out. The schema, the writer, the reader and format.json (the Python writer's
// column lists) are built from these lists, by name; docs/run-file.md describes the columns.
#include "record/sqlite_db.h"

#include "nanscope/step_chunk.h"

#include <functional>
#include <string>
#include <vector>

namespace nanscope::record {

// One row of a chunk table, as a writer fills it and a reader gets it back.
template <typename Row>
struct ChunkColumn {
    std::string name;
    std::string declaration;  // after the name in CREATE TABLE; "" for a measured value (no type)
    std::function<void(Statement &, int i, const Row &)> bind;  // a NULL is left unbound
    std::function<void(const Statement &, int i, Row &)> read;
};

// chunks: a row a chunk, its tally. The first origin is read from the steps row it names.
using ChunkRow = StepChunk;
struct ChunkSeriesRow {
    int chunk = 0;
    std::string series;  // seriesName(), or kSkippedSeries
    SeriesBucket bucket;
};
struct ChunkLayerRow {
    int chunk = 0;
    int layer = 0;
    int nonFiniteSteps = 0;
    StepChunk::LayerPart part;
};

// In table order; a column added later goes at the end (ALTER TABLE ADD COLUMN's place).
const std::vector<ChunkColumn<ChunkRow>> &chunkTableColumns();
const std::vector<ChunkColumn<ChunkSeriesRow>> &chunkSeriesColumns();
const std::vector<ChunkColumn<ChunkLayerRow>> &chunkLayerColumns();

// CREATE TABLE of the three, with names prefixed `prefix` ("coarse_" for the coarse ones).
std::string chunkTablesSql(const std::string &prefix = "");

// The names of `columns`, comma-separated, each after `qualifier` ("c." for a join).
template <typename Row>
std::string columnNames(const std::vector<ChunkColumn<Row>> &columns, const std::string &qualifier = "")
{
    std::string out;
    for (const auto &c : columns)
        out += (out.empty() ? "" : ", ") + qualifier + c.name;
    return out;
}

}  // namespace nanscope::record
