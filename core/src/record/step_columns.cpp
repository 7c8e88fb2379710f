#include "record/step_columns.h"

#include "record/run_file_json.h"
#include "record/run_file_schema.h"

#include "nanscope/precision.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

namespace nanscope::record {

namespace {

using Csv = std::function<std::string(const StepRecord &, const std::vector<Layer> &)>;

std::string joined(const std::vector<std::int64_t> &v)
{
    std::string out;
    for (std::int64_t i : v)
        out += (out.empty() ? "" : " ") + std::to_string(i);
    return out;
}

StepColumn number(const char *name, double StepRecord::*m)
{
    return {name,
            "",
            1,
            [m](Statement &s, int i, const StepRecord &r) { s.bind(i, r.*m); },
            [m](const Statement &s, int i, StepRecord &r, const StepReadContext &) { r.*m = s.real(i); },
            [m](const StepRecord &r, const std::vector<Layer> &) { return csvNumber(r.*m); }};
}

StepColumn flag(const char *name, bool StepRecord::*m, bool exported = true)
{
    return {name,
            "INTEGER NOT NULL",
            1,
            [m](Statement &s, int i, const StepRecord &r) { s.bind(i, int(r.*m)); },
            [m](const Statement &s, int i, StepRecord &r, const StepReadContext &) { r.*m = s.integer(i) != 0; },
            exported ? Csv([m](const StepRecord &r, const std::vector<Layer> &) { return std::to_string(int(r.*m)); })
                     : Csv()};
}

StepColumn indexList(const char *name, std::vector<std::int64_t> StepRecord::*m)
{
    return {name,
            "TEXT",
            1,
            [m](Statement &s, int i, const StepRecord &r) { s.bindText(i, indexListText(r.*m)); },
            [m](const Statement &s, int i, StepRecord &r, const StepReadContext &) { r.*m = indexListFrom(s.text(i)); },
            [m](const StepRecord &r, const std::vector<Layer> &) { return joined(r.*m); }};
}

// An origin's text field: NULL for a finite step or an empty text.
StepColumn originText(const char *name, std::string Origin::*m, bool exported)
{
    return {name,
            "TEXT",
            1,
            [m](Statement &s, int i, const StepRecord &r) { s.bindText(i, r.origin.valid() ? r.origin.*m : ""); },
            [m](const Statement &s, int i, StepRecord &r, const StepReadContext &) { r.origin.*m = s.text(i); },
            exported ? Csv([m](const StepRecord &r, const std::vector<Layer> &) { return csvText(r.origin.*m); })
                     : Csv()};
}

// A health as <prefix>_numel, _min, _max, _norm, _nan, _posinf, _neginf (all NULL when it was not
// observed) and the generated <prefix>_absmax. numel comes first: it tells the rest were observed.
void addHealth(std::vector<StepColumn> &c, const std::string &prefix, TensorHealth StepRecord::*m)
{
    const auto value = [&](const char *suffix, const char *declaration, auto get, auto set) {
        c.push_back({prefix + suffix, declaration, 1,
                     [m, get](Statement &s, int i, const StepRecord &r) {
                         const TensorHealth &h = r.*m;
                         if (h.present)
                             s.bind(i, get(h));
                         else
                             s.bindNull(i);
                     },
                     [m, set](const Statement &s, int i, StepRecord &r, const StepReadContext &) {
                         if ((r.*m).present)
                             set(r.*m, s, i);
                     },
                     {}});
    };
    c.push_back({prefix + "_numel", "INTEGER", 1,
                 [m](Statement &s, int i, const StepRecord &r) {
                     if ((r.*m).present)
                         s.bind(i, (r.*m).numel);
                     else
                         s.bindNull(i);
                 },
                 [m](const Statement &s, int i, StepRecord &r, const StepReadContext &) {
                     (r.*m).present = !s.isNull(i);
                     (r.*m).numel = s.integer(i);
                 },
                 {}});
    value("_min", "", [](const TensorHealth &h) { return h.min; },
          [](TensorHealth &h, const Statement &s, int i) { h.min = s.real(i); });
    value("_max", "", [](const TensorHealth &h) { return h.max; },
          [](TensorHealth &h, const Statement &s, int i) {
              h.max = s.real(i);
              h.absMax = absMaxOf(h.min, h.max);  // not stored: see readHealthValues
          });
    value("_norm", "", [](const TensorHealth &h) { return h.finiteL2; },
          [](TensorHealth &h, const Statement &s, int i) { h.finiteL2 = s.real(i); });
    value("_nan", "INTEGER", [](const TensorHealth &h) { return h.nan; },
          [](TensorHealth &h, const Statement &s, int i) { h.nan = s.integer(i); });
    value("_posinf", "INTEGER", [](const TensorHealth &h) { return h.posInf; },
          [](TensorHealth &h, const Statement &s, int i) { h.posInf = s.integer(i); });
    value("_neginf", "INTEGER", [](const TensorHealth &h) { return h.negInf; },
          [](TensorHealth &h, const Statement &s, int i) { h.negInf = s.integer(i); });
    c.push_back({prefix + "_absmax",
                 "REAL GENERATED ALWAYS AS (max(abs(" + prefix + "_min), abs(" + prefix + "_max))) VIRTUAL",
                 1,
                 {},
                 {},
                 {}});
}

// An origin's call number (call or calls) when its layer ran more than once that step, else NULL.
StepColumn originCall(const char *name, int Origin::*m)
{
    return {name, "INTEGER", 4,
            [m](Statement &s, int i, const StepRecord &r) {
                if (r.origin.valid() && r.origin.calls > 1)
                    s.bind(i, r.origin.*m);
                else
                    s.bindNull(i);
            },
            [m](const Statement &s, int i, StepRecord &r, const StepReadContext &) {
                r.origin.*m = s.isNull(i) ? 0 : int(s.integer(i));
            },
            {}};
}

std::vector<StepColumn> makeStepColumns()
{
    std::vector<StepColumn> c;
    c.push_back({"step", "INTEGER PRIMARY KEY", 1,
                 [](Statement &s, int i, const StepRecord &r) { s.bind(i, r.step); },
                 [](const Statement &s, int i, StepRecord &r, const StepReadContext &) { r.step = int(s.integer(i)); },
                 [](const StepRecord &r, const std::vector<Layer> &) { return std::to_string(r.step); }});
    c.push_back(number("loss", &StepRecord::loss));
    c.push_back(number("grad_norm", &StepRecord::gradNorm));
    c.push_back(number("grad_norm_clipped", &StepRecord::gradNormClipped));
    c.push_back(number("lr", &StepRecord::learningRate));
    c.push_back(number("loss_scale", &StepRecord::lossScale));
    c.push_back(flag("skipped", &StepRecord::skipped));
    c.push_back(flag("rolled_back", &StepRecord::rolledBack));
    c.push_back({"why", "TEXT", 1, [](Statement &s, int i, const StepRecord &r) { s.bindText(i, r.why); },
                 [](const Statement &s, int i, StepRecord &r, const StepReadContext &) { r.why = s.text(i); },
                 [](const StepRecord &r, const std::vector<Layer> &) { return csvText(r.why); }});
    c.push_back(number("step_ms", &StepRecord::stepMillis));
    // The origin: phase NULL for a finite step, and every other origin column NULL with it.
    c.push_back({"origin_phase", "TEXT", 1,
                 [](Statement &s, int i, const StepRecord &r) {
                     s.bindText(i, r.origin.valid() ? phaseName(r.origin.phase) : "");
                 },
                 [](const Statement &s, int i, StepRecord &r, const StepReadContext &) {
                     if (!s.isNull(i)) {
                         r.origin.phase = phaseFromName(s.text(i));
                         r.origin.step = r.step;
                     }
                 },
                 [](const StepRecord &r, const std::vector<Layer> &) {
                     return std::string(r.origin.valid() ? phaseName(r.origin.phase) : "");
                 }});
    c.push_back({"origin_layer", "INTEGER", 1,
                 [](Statement &s, int i, const StepRecord &r) {
                     if (r.origin.valid() && r.origin.layer >= 0)
                         s.bind(i, r.origin.layer);
                     else
                         s.bindNull(i);
                 },
                 [](const Statement &s, int i, StepRecord &r, const StepReadContext &context) {
                     r.origin.layer = s.isNull(i) ? -1 : int(s.integer(i));
                     if (r.origin.layer >= 0 && r.origin.layer < int(context.layers.size()))
                         r.origin.layerPath = context.layers[std::size_t(r.origin.layer)].path;
                 },
                 [](const StepRecord &r, const std::vector<Layer> &layers) {  // the CSV names the layer
                     const int l = r.origin.layer;
                     return csvText(r.origin.valid() && l >= 0 && l < int(layers.size()) ? layers[std::size_t(l)].path
                                                                                        : "");
                 }});
    c.push_back(originText("origin_op", &Origin::op, true));
    c.push_back(originText("origin_source", &Origin::source, false));
    c.push_back({"origin_produced", "INTEGER", 1,
                 [](Statement &s, int i, const StepRecord &r) {
                     if (r.origin.valid())
                         s.bind(i, int(r.origin.produced));
                     else
                         s.bindNull(i);
                 },
                 [](const Statement &s, int i, StepRecord &r, const StepReadContext &) {
                     r.origin.produced = s.integer(i) != 0;
                 },
                 {}});
    c.push_back(originText("origin_explanation", &Origin::explanation, false));
    addHealth(c, "input", &StepRecord::inputHealth);
    addHealth(c, "loss", &StepRecord::lossHealth);
    c.push_back(indexList("bad_samples", &StepRecord::badSamples));
    c.push_back(indexList("quarantined", &StepRecord::quarantined));
    c.push_back(flag("zeroed_gradients", &StepRecord::zeroedGradients, false));
    c.push_back({"overflow_layers", "TEXT", 1,
                 [](Statement &s, int i, const StepRecord &r) {
                     s.bindText(i, r.overflowLayers.empty() ? std::string() : Json(r.overflowLayers).dump());
                 },
                 [](const Statement &s, int i, StepRecord &r, const StepReadContext &) {
                     for (std::int64_t id : indexListFrom(s.text(i)))
                         r.overflowLayers.push_back(int(id));
                 },
                 {}});
    // Version 2: the precision each step ran in (mixed precision may change during a run).
    c.push_back({"precision", "TEXT", 2,
                 [](Statement &s, int i, const StepRecord &r) { s.bind(i, std::string(precisionName(r.precision))); },
                 [](const Statement &s, int i, StepRecord &r, const StepReadContext &context) {
                     r.precision = parsePrecision(s.text(i)).value_or(context.runPrecision);
                 },
                 [](const StepRecord &r, const std::vector<Layer> &) { return std::string(precisionName(r.precision)); }});
    // Version 3: why the file kept the step's layer rows (NULL: it keeps every step's), or `none`.
    c.push_back({"layer_detail", "TEXT", 3,
                 [](Statement &s, int i, const StepRecord &r) { s.bindText(i, layerDetailId(r.layerDetail)); },
                 [](const Statement &s, int i, StepRecord &r, const StepReadContext &) {
                     r.layerDetail = layerDetailFromId(s.text(i));
                 },
                 [](const StepRecord &r, const std::vector<Layer> &) { return std::string(layerDetailId(r.layerDetail)); }});
    // Version 4: the call of the origin's layer that made the value, of how many that step (NULL:
    // the layer ran once, or no origin), so a file's origin names "call 50 of 60" as a live run's.
    c.push_back(originCall("origin_call", &Origin::call));
    c.push_back(originCall("origin_calls", &Origin::calls));
    return c;
}

std::string names(const std::vector<const StepColumn *> &columns)
{
    std::string out;
    for (const StepColumn *c : columns)
        out += (out.empty() ? "" : ", ") + c->name;
    return out;
}

}  // namespace

const std::vector<StepColumn> &stepColumns()
{
    static const std::vector<StepColumn> columns = makeStepColumns();
    return columns;
}

std::string stepsTableSql()
{
    std::string sql = "CREATE TABLE steps (";
    for (const StepColumn &c : stepColumns())
        sql += (&c == &stepColumns().front() ? "\n    " : ",\n    ") + c.name +
               (c.declaration.empty() ? "" : " " + c.declaration);
    return sql + "\n);\n";
}

namespace {

std::vector<const StepColumn *> writtenColumns()
{
    std::vector<const StepColumn *> out;
    for (const StepColumn &c : stepColumns())
        if (c.bind)
            out.push_back(&c);
    return out;
}

std::string insertSql(const std::vector<const StepColumn *> &columns)
{
    std::string values;
    for (std::size_t i = 0; i < columns.size(); ++i)
        values += i == 0 ? "?" : ",?";
    return "INSERT OR REPLACE INTO steps (" + names(columns) + ") VALUES (" + values + ")";
}

std::vector<std::string> presentColumns(Database &db)
{
    std::vector<std::string> present;
    Statement info = db.prepare("SELECT name FROM pragma_table_xinfo('steps')");
    while (info.step())
        present.push_back(info.text(0));
    return present;
}

std::vector<const StepColumn *> readableColumns(Database &db)
{
    const std::vector<std::string> present = presentColumns(db);
    std::vector<const StepColumn *> out;
    for (const StepColumn &c : stepColumns())
        if (c.read && std::find(present.begin(), present.end(), c.name) != present.end())
            out.push_back(&c);
    return out;
}

}  // namespace

std::vector<std::string> missingStepColumns(Database &db, int formatVersion)
{
    const std::vector<std::string> present = presentColumns(db);
    std::vector<std::string> missing;
    for (const StepColumn &c : stepColumns())
        if (c.since <= formatVersion && std::find(present.begin(), present.end(), c.name) == present.end())
            missing.push_back(c.name);
    return missing;
}

StepInsert::StepInsert(Database &db) : columns_(writtenColumns()), insert_(db.prepare(insertSql(columns_))) {}

void StepInsert::run(const StepRecord &r, std::optional<LayerDetail> detail)
{
    for (std::size_t i = 0; i < columns_.size(); ++i) {
        if (detail && columns_[i]->name == "layer_detail")
            insert_.bindText(int(i) + 1, layerDetailId(*detail));
        else
            columns_[i]->bind(insert_, int(i) + 1, r);
    }
    insert_.run();
}

StepSelect::StepSelect(Database &db)
    : columns_(readableColumns(db)),
      select_(db.prepare("SELECT " + names(columns_) + " FROM steps WHERE step > ? ORDER BY step LIMIT ?"))
{
}

void StepSelect::start(int afterStep, int maxCount)
{
    select_.reset();
    select_.bind(1, afterStep).bind(2, maxCount);
}

bool StepSelect::next(StepRecord &r, const StepReadContext &context)
{
    if (!select_.step())
        return false;
    r.precision = context.runPrecision;
    for (std::size_t i = 0; i < columns_.size(); ++i)
        columns_[i]->read(select_, int(i), r, context);
    return true;
}

std::string stepCsvHeader()
{
    std::string out;
    for (const StepColumn &c : stepColumns())
        if (c.csv)
            out += c.name + ",";
    return out + "nonfinite";
}

std::string stepCsvRow(const StepRecord &r, const std::vector<Layer> &layers)
{
    std::string out;
    for (const StepColumn &c : stepColumns())
        if (c.csv)
            out += c.csv(r, layers) + ",";
    return out + std::to_string(int(r.nonFinite()));
}

std::string csvNumber(double v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<double>::max_digits10) << v;
    return s.str();
}

std::string csvText(const std::string &t)
{
    if (t.find_first_of(",\"\n\r") == std::string::npos)
        return t;
    std::string out = "\"";
    for (char c : t)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace nanscope::record
