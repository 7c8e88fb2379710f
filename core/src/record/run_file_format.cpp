// The format definition of nanscope/run_file_format.h, built from the same tables the C++ writer
// uses: the schema as createSchema makes it, the steps columns, the summary as summaryJson writes it.
#include "nanscope/run_file_format.h"

#include "nanscope/event_message.h"
#include "nanscope/health_kinds.h"
#include "nanscope/precision.h"
#include "nanscope/run_json.h"
#include "nanscope/step_chunk.h"
#include "record/chunk_columns.h"
#include "record/chunk_rows.h"
#include "record/run_file_json.h"
#include "record/run_file_schema.h"
#include "record/sqlite_db.h"
#include "record/step_columns.h"

namespace nanscope {

namespace {

Json schemaStatements(record::Database &db)
{
    Json sql = Json::array();
    record::Statement s = db.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid");
    while (s.step())
        sql.push_back(s.text(0) + ";");
    return sql;
}

Json exponentRows(record::Database &db)
{
    Json rows = Json::array();
    record::Statement s = db.prepare("SELECT e, scale FROM float32_exponents ORDER BY e");
    while (s.step())
        rows.push_back(Json::array({s.integer(0), s.real(1)}));
    return rows;
}

Json keysOf(const Json &object)
{
    Json keys = Json::array();
    for (auto it = object.begin(); it != object.end(); ++it)
        keys.push_back(it.key());
    return keys;
}

}  // namespace

std::string runFileFormatJson()
{
    record::Database db(":memory:", record::Database::Mode::Create);
    record::createSchema(db);
    Json columns = Json::array();
    for (const record::StepColumn &c : record::stepColumns())
        columns.push_back({{"name", c.name}, {"since", c.since}, {"written", bool(c.bind)}, {"exported", bool(c.csv)}});
    Json kinds = Json::array();
    for (const HealthKindInfo &k : kHealthKinds)
        kinds.push_back(k.id);
    Json phases = Json::array();
    for (Phase p : {Phase::Input, Phase::Forward, Phase::Loss, Phase::Backward, Phase::Parameter, Phase::Update})
        phases.push_back(phaseName(p));
    Json events = Json::array();
    for (EventKind k : {EventKind::Info, EventKind::FirstNonFinite, EventKind::Recovery, EventKind::Rollback,
                        EventKind::ControlChange, EventKind::Paused, EventKind::Error, EventKind::Warning})
        events.push_back(eventKindId(k));
    Json precisions = Json::array();
    Json limits = Json::object();  // what the forecasts warn of: overflow above, rounding to 0 below
    for (Precision p : {Precision::FP32, Precision::FP16, Precision::BF16}) {
        precisions.push_back(precisionName(p));
        limits[precisionName(p)] = {{"largest_finite", largestFinite(p)}, {"smallest_positive", smallestPositive(p)}};
    }
    Json chunkSeries = Json::array();  // in chunk_series' order of writing, the skipped steps' scale last
    for (int s = 0; s < kSeriesCount; ++s)
        chunkSeries.push_back(seriesName(Series(s)));
    chunkSeries.push_back(record::kSkippedSeries);
    // Each chunk table's columns in order (chunk_columns.h): the Python writer fills them by name.
    const auto names = [](const auto &columns) {
        Json out = Json::array();
        for (const auto &c : columns)
            out.push_back(c.name);
        return out;
    };
    const Json chunkColumns = {{"chunks", names(record::chunkTableColumns())},
                               {"chunk_series", names(record::chunkSeriesColumns())},
                               {"chunk_layers", names(record::chunkLayerColumns())}};
    Json messages = Json::object();  // event message ids and their English patterns (%1 the first argument)
    for (const auto &[id, pattern] : eventMessagePatterns())
        messages[id] = pattern;
    Origin origin;
    origin.phase = Phase::Forward;
    const Json out = {
        {"format_version", kRunFileFormatVersion},
        {"application_id", record::kRunFileApplicationId},
        {"schema", schemaStatements(db)},
        {"float32_exponents", exponentRows(db)},
        {"steps_columns", columns},
        {"health_kinds", kinds},
        {"phases", phases},
        {"event_kinds", events},
        {"event_messages", messages},
        {"summary_keys", keysOf(summaryJson(RunSummary{}, {}))},
        {"origin_keys", keysOf(originJson(origin))},
        {"precisions", precisions},
        {"precision_limits", limits},
        {"chunk_steps", kChunkSteps},
        {"coarse_chunk_chunks", kCoarseChunkChunks},
        {"chunk_series", chunkSeries},
        {"chunk_columns", chunkColumns},
        {"keep_all", record::keepJson(KeepPolicy::all(), 1)},
        {"keep_auto", record::keepJson(KeepPolicy{}, KeepPolicy::kSampleEvery)},
    };
    return out.dump(1) + "\n";
}

}  // namespace nanscope
