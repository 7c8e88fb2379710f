// nanscope_conformance FILE: writes the conformance corpus, records in and the C++ rules' answers
// out, that the Python recorder's tests replay through its own rules (python/tests/
// test_conformance.py runs this program for it, so the corpus is always this build's): a rule
// changed on either side alone fails that test. The rules: a step's origin and its sentence
// (findOrigin, explainOrigin, for a chain of modules in a container), the forecasts and warnings
// (TrendForecast), a step's fate (StepRecord::failed, bornInLayer), the chunk rows (StepChunk,
// writeChunk), which steps keep their layer rows (LayerDetailRetention) and the summary's counts
// (StepTally).
#include "conformance_cases.h"

#include "nanscope/layer_detail_retention.h"
#include "nanscope/run_json.h"
#include "nanscope/step_chunk.h"
#include "nanscope/step_tally.h"
#include "rules/origin.h"
#include "record/chunk_rows.h"
#include "record/run_file_schema.h"
#include "record/sqlite_db.h"
#include "rules/trend_forecast.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

using namespace nanscope;

namespace {

Json healthJson(const TensorHealth &h)
{
    return Json::array({h.present, h.numel, h.nan, h.posInf, h.negInf, numberJson(h.min), numberJson(h.max),
                        numberJson(h.absMax), numberJson(h.finiteL2)});
}

Json recordJson(const StepRecord &r)
{
    Json layers = Json::array();
    for (const LayerHealth &h : r.layers)
        layers.push_back(Json::array({healthJson(h.forward), healthJson(h.grad), healthJson(h.params),
                                      healthJson(h.paramGrads), h.inputFinite, numberJson(h.updateRatio)}));
    Json origin = nullptr;
    if (r.origin.valid())
        origin = {{"phase", phaseName(r.origin.phase)}, {"layer", r.origin.layer}, {"produced", r.origin.produced},
                  {"explanation", r.origin.explanation}};
    return {{"step", r.step}, {"loss", numberJson(r.loss)}, {"grad_norm", numberJson(r.gradNorm)},
            {"grad_norm_clipped", numberJson(r.gradNormClipped)}, {"lr", numberJson(r.learningRate)},
            {"loss_scale", numberJson(r.lossScale)}, {"loss_scaling", r.lossScaling}, {"skipped", r.skipped},
            {"step_ms", numberJson(r.stepMillis)}, {"origin", origin}, {"overflow_layers", r.overflowLayers},
            {"quarantined", r.quarantined}, {"loss_health", healthJson(r.lossHealth)},
            {"input_health", healthJson(r.inputHealth)}, {"layers", layers},
            // The C++ answers about the step itself.
            {"failed", r.failed()}, {"born_in_layer", r.bornInLayer()}};
}

// Every row of `table`, each column as SQLite holds it (NULL, integer, real or text).
Json tableRows(record::Database &db, const std::string &table, const std::string &order)
{
    std::vector<std::string> columns;
    record::Statement info = db.prepare("SELECT name FROM pragma_table_info('" + table + "')");
    while (info.step())
        columns.push_back(info.text(0));
    std::string select;
    for (const std::string &c : columns)
        select += (select.empty() ? "" : ", ") + ("typeof(" + c + "), " + c);
    Json rows = Json::array();
    record::Statement s = db.prepare("SELECT " + select + " FROM " + table + " ORDER BY " + order);
    while (s.step()) {
        Json row = Json::array();
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const std::string type = s.text(int(2 * i));
            const int at = int(2 * i + 1);
            if (type == "null")
                row.push_back(nullptr);
            else if (type == "integer")
                row.push_back(s.integer(at));
            else if (type == "real")
                row.push_back(numberJson(s.real(at)));
            else
                row.push_back(s.text(at));
        }
        rows.push_back(row);
    }
    return rows;
}

// The chunk rows a run writer writes for these records: one StepChunk a 64 steps, each written once.
Json chunkRows(const conformance::Case &c)
{
    record::Database db(":memory:", record::Database::Mode::Create);
    record::createSchema(db);
    StepChunk chunk(0, c.layers.size());
    for (const StepRecord &r : c.records) {
        if (r.step / kChunkSteps != chunk.index) {
            record::writeChunk(db, chunk);
            chunk = StepChunk(r.step / kChunkSteps, c.layers.size());
        }
        chunk.add(r);
    }
    record::writeChunk(db, chunk);
    return {{"chunks", tableRows(db, "chunks", "chunk")},
            {"chunk_series", tableRows(db, "chunk_series", "chunk, series")},
            {"chunk_layers", tableRows(db, "chunk_layers", "chunk, layer")}};
}

// The order a chain's calls end in: its leaves in order, then the containers, innermost first.
std::vector<int> forwardOrder(const std::vector<Layer> &layers)
{
    std::vector<int> leaves, containers;
    for (const Layer &l : layers) {
        const bool parent = std::any_of(layers.begin(), layers.end(), [&](const Layer &o) { return o.parent == l.id; });
        (parent ? containers : leaves).push_back(l.id);
    }
    leaves.insert(leaves.end(), containers.rbegin(), containers.rend());
    return leaves;
}

// Each record's origin as the C++ rule names it from the layer map (findOrigin), with its sentence.
conformance::Case withOrigins(conformance::Case c)
{
    const std::vector<int> order = forwardOrder(c.layers);
    bool paramsFinite = true;
    for (StepRecord &r : c.records) {
        std::vector<LayerCall> calls;  // each layer called once, in the order its call ended
        for (int id : order)
            calls.push_back(LayerCall{id, r.layers[std::size_t(id)].inputFinite,
                                      r.layers[std::size_t(id)].forward.hasNonFinite()});
        r.origin = findOrigin(OriginInputs{r, c.layers, order, paramsFinite, &calls});
        r.origin.explanation = explainOrigin(r.origin, r);
        paramsFinite = std::none_of(r.layers.begin(), r.layers.end(),
                                    [](const LayerHealth &h) { return h.params.hasNonFinite(); });
    }
    return c;
}

Json caseJson(const conformance::Case &original)
{
    const conformance::Case c = withOrigins(original);
    Json layers = Json::array();
    for (const Layer &l : c.layers)
        layers.push_back(Json::array({l.id, l.path, l.type, l.parent}));
    TrendForecast forecast;
    forecast.reset(c.layers);
    const Precision precision = parsePrecision(c.precision).value_or(Precision::FP32);
    Json records = Json::array(), warnings = Json::array();
    for (const StepRecord &r : c.records) {
        records.push_back(recordJson(r));
        for (const Event &e : forecast.add(r, precision, c.precision))
            warnings.push_back(Json::array({e.step, e.layer, e.message.id, e.message.args}));
    }
    StepTally tally;
    for (const StepRecord &r : c.records)
        tally.add(r);
    RunSummary summary;
    tally.fill(summary);
    return {{"name", c.name}, {"precision", c.precision}, {"horizon", TrendForecast::kDefaultHorizon},
            {"layers", layers}, {"records", records}, {"warnings", warnings}, {"chunks", chunkRows(c)},
            {"summary", summaryJson(summary, c.layers)}};
}

Json decisionsJson(const std::vector<LayerDetailRetention::Decision> &decisions)
{
    Json out = Json::array();
    for (const LayerDetailRetention::Decision &d : decisions)
        out.push_back(Json::array({d.record->step, layerDetailId(d.detail), d.relabelOnly}));
    return out;
}

// The retention's decisions over a long run (its first kFirstSteps steps are all kept): each step,
// then the events raised at it, and the thinnings a budget would ask for, as the writer calls them.
Json retentionJson(const conformance::RetentionCase &c)
{
    LayerDetailRetention retention;
    Json calls = Json::array();
    for (int step = 0; step < c.steps; ++step) {
        auto r = std::make_shared<StepRecord>();
        r->step = step;
        if (c.nonFinite.count(step)) {
            r->inputHealth.present = true;
            r->inputHealth.numel = 4;
            r->inputHealth.nan = 1;
        }
        const auto own = retention.step(r);
        if (own.size() > 1 || own.back().detail != LayerDetail::None)  // a step with no decision says nothing
            calls.push_back(Json::array({"step", step, decisionsJson(own)}));
        for (const auto &[at, kind] : c.events)
            if (at == step)
                calls.push_back(Json::array({"event", kind.second, eventKindId(kind.first),
                                             decisionsJson(retention.event(kind.first, kind.second))}));
        if (c.thinAfter.count(step))
            calls.push_back(Json::array({"thin", step, retention.thin(), retention.sampleEvery()}));
    }
    Json events = Json::array();
    for (const auto &[at, kind] : c.events)
        events.push_back(Json::array({at, kind.second, eventKindId(kind.first)}));
    return {{"name", c.name}, {"steps", c.steps}, {"nonfinite", c.nonFinite}, {"events", events},
            {"thin_after", c.thinAfter}, {"calls", calls}};
}

std::string corpus()
{
    Json cases = Json::array();
    for (const conformance::Case &c : conformance::cases())
        cases.push_back(caseJson(c));
    Json retention = Json::array();
    for (const conformance::RetentionCase &c : conformance::retentionCases())
        retention.push_back(retentionJson(c));
    // One line a record and a line each for a case's answers: a diff after a rule changed shows
    // the answers it changed.
    std::string text = "{\"about\": \"written by nanscope_conformance (tools/conformance): records in, the C++ "
                       "rules' answers out; python/tests/test_conformance.py replays them\",\n\"cases\": [";
    for (std::size_t i = 0; i < cases.size(); ++i) {
        Json &c = cases[i];
        text += i ? ",\n{" : "\n{";
        bool first = true;
        for (auto it = c.begin(); it != c.end(); ++it) {
            text += (first ? "" : ",\n ") + Json(it.key()).dump() + ": ";
            first = false;
            if (it.key() != "records") {
                text += it.value().dump();
                continue;
            }
            text += "[";
            for (std::size_t r = 0; r < it.value().size(); ++r)
                text += (r ? ",\n  " : "\n  ") + it.value()[r].dump();
            text += "]";
        }
        text += "}";
    }
    text += "\n],\n\"retention\": [";
    for (std::size_t i = 0; i < retention.size(); ++i)
        text += (i ? ",\n" : "\n") + retention[i].dump();
    return text + "\n]}\n";
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: nanscope_conformance FILE\n");
        return 2;
    }
    std::ofstream out(argv[1], std::ios::binary);
    out << corpus();
    if (!out.flush()) {
        std::fprintf(stderr, "nanscope_conformance: %s: cannot be written\n", argv[1]);
        return 1;
    }
    return 0;
}
