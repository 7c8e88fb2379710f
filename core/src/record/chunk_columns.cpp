#include "record/chunk_columns.h"

#include "record/run_file_json.h"

#include "nanscope/health_kinds.h"

#include <cmath>
#include <type_traits>

namespace nanscope::record {

namespace {

template <typename Row, typename T>
ChunkColumn<Row> integer(const char *name, const char *declaration, T Row::*m)
{
    return {name, declaration, [m](Statement &s, int i, const Row &r) { s.bind(i, std::int64_t(r.*m)); },
            [m](const Statement &s, int i, Row &r) { r.*m = T(s.integer(i)); }};
}

// A step number, NULL for none (-1); `at` finds it in a row.
template <typename Row, typename At>
ChunkColumn<Row> optionalStep(const char *name, At at)
{
    return {name, "INTEGER",
            [at](Statement &s, int i, const Row &r) {
                if (const int step = at(r); step >= 0)
                    s.bind(i, step);
            },
            [at](const Statement &s, int i, Row &r) { at(r) = s.isNull(i) ? -1 : int(s.integer(i)); }};
}

std::vector<ChunkColumn<ChunkRow>> makeChunkColumns()
{
    using R = ChunkRow;
    return {
        {"chunk", "INTEGER PRIMARY KEY", [](Statement &s, int i, const R &c) { s.bind(i, c.index); },
         [](const Statement &, int, R &) {}},  // the chunk's number is given when it is made
        integer<R>("first_step", "INTEGER NOT NULL", &R::firstStep),
        integer<R>("last_step", "INTEGER NOT NULL", &R::lastStep),
        {"steps", "INTEGER NOT NULL", [](Statement &s, int i, const R &c) { s.bind(i, c.tally.steps); },
         [](const Statement &s, int i, R &c) { c.tally.steps = int(s.integer(i)); }},
        {"first_origin_step", "INTEGER",
         [](Statement &s, int i, const R &c) {
             if (c.tally.firstOrigin.valid())
                 s.bind(i, c.tally.firstOrigin.step);
         },
         [](const Statement &, int, R &) {}},  // the origin is read from the steps row it names
        {"nonfinite_steps", "INTEGER NOT NULL", [](Statement &s, int i, const R &c) { s.bind(i, c.tally.nonFiniteSteps); },
         [](const Statement &s, int i, R &c) { c.tally.nonFiniteSteps = int(s.integer(i)); }},
        {"rollbacks", "INTEGER NOT NULL", [](Statement &s, int i, const R &c) { s.bind(i, c.tally.rollbacks); },
         [](const Statement &s, int i, R &c) { c.tally.rollbacks = int(s.integer(i)); }},
        {"scaler_skipped_steps", "INTEGER NOT NULL",
         [](Statement &s, int i, const R &c) { s.bind(i, c.tally.scalerSkippedSteps); },
         [](const Statement &s, int i, R &c) { c.tally.scalerSkippedSteps = int(s.integer(i)); }},
        {"step_ms", "", [](Statement &s, int i, const R &c) { s.bind(i, c.tally.stepMillis); },
         [](const Statement &s, int i, R &c) { c.tally.stepMillis = s.isNull(i) ? 0.0 : s.real(i); }},
        {"quarantined", "TEXT", [](Statement &s, int i, const R &c) { s.bindText(i, indexListText(c.tally.quarantined)); },
         [](const Statement &s, int i, R &c) { c.tally.quarantined = indexListFrom(s.text(i)); }},
    };
}

std::vector<ChunkColumn<ChunkSeriesRow>> makeSeriesColumns()
{
    using R = ChunkSeriesRow;
    const auto bucketInt = [](const char *name, const char *declaration, int SeriesBucket::*m) {
        return ChunkColumn<R>{name, declaration, [m](Statement &s, int i, const R &r) { s.bind(i, r.bucket.*m); },
                              [m](const Statement &s, int i, R &r) { r.bucket.*m = int(s.integer(i)); }};
    };
    // min and max are over the finite values: NULL when there were none.
    const auto range = [](const char *name, double SeriesBucket::*m) {
        return ChunkColumn<R>{name, "",
                              [m](Statement &s, int i, const R &r) {
                                  if (r.bucket.finiteCount > 0)
                                      s.bind(i, r.bucket.*m);
                              },
                              [m](const Statement &s, int i, R &r) {
                                  if (!s.isNull(i))
                                      r.bucket.*m = s.real(i);
                              }};
    };
    return {
        integer<R>("chunk", "INTEGER NOT NULL", &R::chunk),
        {"series", "TEXT NOT NULL", [](Statement &s, int i, const R &r) { s.bind(i, r.series); },
         [](const Statement &s, int i, R &r) { r.series = s.text(i); }},
        bucketInt("first_step", "INTEGER NOT NULL", &SeriesBucket::firstStep),
        bucketInt("last_step", "INTEGER NOT NULL", &SeriesBucket::lastStep),
        bucketInt("count", "INTEGER NOT NULL", &SeriesBucket::count),
        bucketInt("finite", "INTEGER NOT NULL", &SeriesBucket::finiteCount),
        range("min", &SeriesBucket::min),
        range("max", &SeriesBucket::max),
        optionalStep<R>("first_nonfinite_step", [](auto &r) -> auto & { return r.bucket.firstNonFiniteStep; }),
        {"first_nonfinite_value", "",
         [](Statement &s, int i, const R &r) {
             if (r.bucket.hasNonFinite())
                 s.bind(i, r.bucket.firstNonFiniteValue);  // NaN goes in as NULL
         },
         [](const Statement &s, int i, R &r) { r.bucket.firstNonFiniteValue = s.real(i); }},  // NULL: NaN
    };
}

// One value of health kind `k`'s cell: NULL when nothing was observed of the kind; a cell is
// present where its `numel` column (`tellsPresence`) is not NULL.
template <typename T>
ChunkColumn<ChunkLayerRow> cellColumn(int k, const std::string &name, const char *declaration, T MapCell::*m,
                                      bool tellsPresence = false)
{
    return {name, declaration,
            [k, m](Statement &s, int i, const ChunkLayerRow &r) {
                if (const MapCell &c = r.part.cells[std::size_t(k)]; c.present)
                    s.bind(i, c.*m);
            },
            [k, m, tellsPresence](const Statement &s, int i, ChunkLayerRow &r) {
                if (s.isNull(i))
                    return;
                MapCell &c = r.part.cells[std::size_t(k)];
                if constexpr (std::is_floating_point_v<T>)
                    c.*m = s.real(i);
                else
                    c.*m = T(s.integer(i));
                c.present = c.present || tellsPresence;
            }};
}

std::vector<ChunkColumn<ChunkLayerRow>> makeLayerColumns()
{
    using R = ChunkLayerRow;
    std::vector<ChunkColumn<R>> columns = {
        integer<R>("chunk", "INTEGER NOT NULL", &R::chunk),
        integer<R>("layer", "INTEGER NOT NULL", &R::layer),
        optionalStep<R>("first_nonfinite", [](auto &r) -> auto & { return r.part.firstNonFinite; }),
        optionalStep<R>("first_produced", [](auto &r) -> auto & { return r.part.firstProduced; }),
        integer<R>("nonfinite_steps", "INTEGER NOT NULL", &R::nonFiniteSteps),
    };
    // Six columns a health kind (then, after the update ratio, its norm).
    for (int k = 0; k < kLayerHealthKinds; ++k) {
        const std::string id = kHealthKinds[std::size_t(k)].id;
        columns.push_back(cellColumn(k, id + "_step", "INTEGER", &MapCell::step));
        columns.push_back(cellColumn(k, id + "_numel", "INTEGER", &MapCell::numel, true));
        columns.push_back(cellColumn(k, id + "_nan", "INTEGER", &MapCell::nan));
        columns.push_back(cellColumn(k, id + "_posinf", "INTEGER", &MapCell::posInf));
        columns.push_back(cellColumn(k, id + "_neginf", "INTEGER", &MapCell::negInf));
        columns.push_back(cellColumn(k, id + "_absmax", "", &MapCell::absMax));
    }
    // Added after the first release: files of it lack them (no update read, norms 0).
    columns.push_back({"update_ratio", "",
                       [](Statement &s, int i, const R &r) {
                           if (!std::isnan(r.part.updateRatio))
                               s.bind(i, r.part.updateRatio);
                       },
                       [](const Statement &s, int i, R &r) { r.part.updateRatio = s.real(i); }});  // NULL: NaN
    for (int k = 0; k < kLayerHealthKinds; ++k)
        columns.push_back(cellColumn(k, std::string(kHealthKinds[std::size_t(k)].id) + "_norm", "", &MapCell::norm));
    return columns;
}

template <typename Row>
std::string tableSql(const std::string &name, const std::vector<ChunkColumn<Row>> &columns, const char *after)
{
    std::string sql = "CREATE TABLE " + name + " (";
    for (std::size_t i = 0; i < columns.size(); ++i)
        sql += std::string(i ? "," : "") + "\n    " + columns[i].name +
               (columns[i].declaration.empty() ? "" : " " + columns[i].declaration);
    return sql + after;
}

}  // namespace

const std::vector<ChunkColumn<ChunkRow>> &chunkTableColumns()
{
    static const std::vector<ChunkColumn<ChunkRow>> columns = makeChunkColumns();
    return columns;
}

const std::vector<ChunkColumn<ChunkSeriesRow>> &chunkSeriesColumns()
{
    static const std::vector<ChunkColumn<ChunkSeriesRow>> columns = makeSeriesColumns();
    return columns;
}

const std::vector<ChunkColumn<ChunkLayerRow>> &chunkLayerColumns()
{
    static const std::vector<ChunkColumn<ChunkLayerRow>> columns = makeLayerColumns();
    return columns;
}

std::string chunkTablesSql(const std::string &prefix)
{
    return tableSql(prefix + "chunks", chunkTableColumns(), "\n);\n") +
           tableSql(prefix + "chunk_series", chunkSeriesColumns(), ",\n    PRIMARY KEY (chunk, series)\n) WITHOUT ROWID;\n") +
           tableSql(prefix + "chunk_layers", chunkLayerColumns(), ",\n    PRIMARY KEY (chunk, layer)\n) WITHOUT ROWID;\n");
}

}  // namespace nanscope::record
