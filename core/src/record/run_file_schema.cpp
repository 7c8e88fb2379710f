#include "record/run_file_schema.h"

#include "record/chunk_columns.h"

#include "record/run_file_json.h"
#include "record/step_columns.h"

#include "nanscope/health_kinds.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace nanscope::record {

namespace {

// Documented column by column in docs/run-file.md: change both together, and bump
// kRunFileFormatVersion as docs/run-file.md says ("Versioning"). Measured values have no declared
// type: a REAL column would store -0.0 as the integer 0 and lose its sign. The steps table is
// step_columns.cpp's; layer_steps and chunk_layers have a group of columns per health kind.
const char *const kSchema = R"sql(
CREATE TABLE run (
    format_version   INTEGER NOT NULL,
    nanscope_version TEXT NOT NULL,
    libtorch_version TEXT NOT NULL,
    created          TEXT NOT NULL,
    scenario         TEXT,
    model_path       TEXT,
    model_sha256     TEXT,
    device           TEXT NOT NULL,
    precision        TEXT NOT NULL,
    seed             INTEGER NOT NULL,
    config           TEXT NOT NULL,
    controls         TEXT NOT NULL,
    summary          TEXT,
    finished         TEXT,
    heartbeat        INTEGER NOT NULL DEFAULT 0,
    rank             INTEGER,
    world_size       INTEGER,
    keep             TEXT
);
CREATE TABLE layers (
    id     INTEGER PRIMARY KEY,
    path   TEXT NOT NULL,
    type   TEXT NOT NULL,
    parent INTEGER
);
CREATE TABLE float32_exponents (
    e     INTEGER PRIMARY KEY,
    scale NOT NULL
);
CREATE TABLE layer_nonfinite (
    step INTEGER NOT NULL,
    layer INTEGER NOT NULL,
    kind TEXT NOT NULL,
    nan INTEGER NOT NULL,
    posinf INTEGER NOT NULL,
    neginf INTEGER NOT NULL,
    PRIMARY KEY (step, layer, kind)
) WITHOUT ROWID;
CREATE TABLE events (
    id     INTEGER PRIMARY KEY,
    step   INTEGER NOT NULL,
    kind   TEXT NOT NULL,
    layer  INTEGER,
    text   TEXT NOT NULL,
    origin TEXT,
    message TEXT
);
CREATE TABLE capsules (
    step          INTEGER PRIMARY KEY,
    reason        TEXT NOT NULL,
    snapshot_step INTEGER,
    bytes         INTEGER NOT NULL,
    meta          TEXT NOT NULL,
    state         BLOB NOT NULL,
    model_sha256  TEXT
);
CREATE TABLE embedded_files (
    sha256 TEXT PRIMARY KEY,
    name   TEXT NOT NULL,
    bytes  INTEGER NOT NULL,
    data   BLOB NOT NULL
);
CREATE TABLE control_changes (
    event   INTEGER NOT NULL REFERENCES events(id),
    step    INTEGER NOT NULL,
    control TEXT NOT NULL,
    old     TEXT NOT NULL,
    new     TEXT NOT NULL
);
)sql";

// layer_steps: a row a step and layer (key = step * layers + layer), four columns a health kind.
std::string layerStepsTableSql()
{
    std::string sql = "CREATE TABLE layer_steps (\n    key INTEGER PRIMARY KEY,\n    input_finite INTEGER NOT NULL";
    for (const HealthKindInfo &k : kHealthKinds) {
        const std::string c = k.id;
        sql += ",\n    " + c + "_numel INTEGER, " + c + "_min, " + c + "_max, " + c + "_norm";
    }
    return sql + ",\n    update_ratio\n);\n";
}

// SQL that decodes a compact min or max column (see Range::Compact): a float's bits are
// sign, 8 exponent bits and 23 mantissa bits; float32_exponents holds each exponent's power of
// two, so no math function is needed and every value comes out exact.
std::string decodedRange(const std::string &c)
{
    const std::string e = "((" + c + " >> 23) & 255)";
    return "CASE typeof(" + c + ") WHEN 'integer' THEN (CASE WHEN " + c + " < 0 THEN -1.0 ELSE 1.0 END) * (CASE " + e +
           " WHEN 255 THEN 9e999 ELSE ((" + c + " & 8388607) + (CASE " + e +
           " WHEN 0 THEN 0 ELSE 8388608 END)) * (SELECT scale FROM float32_exponents WHERE e = " + e + ") END) ELSE " +
           c + " END";
}

// The views users query: layer_steps decoded (one row a step and layer), and layer_health (one
// row a layer, step and kind that was observed).
std::string views()
{
    std::string wide = "CREATE VIEW layer_steps_decoded AS SELECT key / (SELECT count(*) FROM layers) AS step, "
                       "key % (SELECT count(*) FROM layers) AS layer, input_finite";
    for (const HealthKindInfo &k : kHealthKinds) {
        const std::string c = k.id;
        wide += ", " + c + "_numel, " + decodedRange(c + "_min") + " AS " + c + "_min, " + decodedRange(c + "_max") +
                " AS " + c + "_max, " + c + "_norm";
    }
    wide += ", update_ratio FROM layer_steps;";
    std::string sql = "CREATE VIEW layer_health AS ";
    for (const HealthKindInfo &k : kHealthKinds) {
        const std::string c = k.id;
        if (k.kind != kHealthKinds.front().kind)
            sql += " UNION ALL ";
        sql += "SELECT s.step, s.layer, '" + c + "' AS kind, s." + c + "_numel AS numel, " +
               "coalesce(n.nan, 0) AS nan, coalesce(n.posinf, 0) AS posinf, coalesce(n.neginf, 0) AS neginf, " + "s." +
               c + "_min AS min, s." + c + "_max AS max, max(abs(s." + c + "_min), abs(s." + c +
               "_max)) AS absmax, s." + c + "_norm AS norm FROM layer_steps_decoded s LEFT JOIN layer_nonfinite n " +
               "ON n.step = s.step AND n.layer = s.layer AND n.kind = '" + c + "' WHERE s." + c + "_numel IS NOT NULL";
    }
    return wide + sql + ";";
}

void bindRange(Statement &s, int i, double v, Range range)
{
    const bool fits = std::isinf(v) || std::fabs(v) <= double(std::numeric_limits<float>::max());
    const float f = fits ? float(v) : 0.0f;
    if (range == Range::Compact && fits && double(f) == v) {
        std::int32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        s.bind(i, std::int64_t(bits));
    } else {
        s.bind(i, v);
    }
}

double readRange(const Statement &s, int i, Range range)
{
    if (range == Range::Compact && s.isInteger(i)) {
        const auto bits = std::int32_t(s.integer(i));
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return double(f);
    }
    return s.real(i);
}

}  // namespace

Origin readOrigin(const Statement &s, int first, int step, const std::vector<Layer> &layers)
{
    Origin o;
    if (s.isNull(first))
        return o;
    o.phase = phaseFromName(s.text(first));
    o.step = step;
    o.layer = s.isNull(first + 1) ? -1 : int(s.integer(first + 1));
    if (o.layer >= 0 && o.layer < int(layers.size()))
        o.layerPath = layers[std::size_t(o.layer)].path;
    o.op = s.text(first + 2);
    o.source = s.text(first + 3);
    o.produced = s.integer(first + 4) != 0;
    o.explanation = s.text(first + 5);
    return o;
}

void createSchema(Database &db)
{
    db.exec(kSchema);
    db.exec(stepsTableSql());
    db.exec(layerStepsTableSql());
    db.exec(chunkTablesSql());  // chunk_columns.h
    db.exec(chunkTablesSql("coarse_"));
    db.exec(views());
    Statement scale = db.prepare("INSERT INTO float32_exponents (e, scale) VALUES (?, ?)");
    for (int e = 0; e < 255; ++e)  // a float's value is mantissa * 2^(e - 150); e = 0: 2^-149
        scale.bind(1, e).bind(2, std::ldexp(1.0, std::max(e, 1) - 150)).run();
}

void bindHealthValues(Statement &s, int first, const TensorHealth &h, Range range)
{
    if (!h.present) {
        for (int i = 0; i < 4; ++i)
            s.bindNull(first + i);
        return;
    }
    s.bind(first, h.numel);
    bindRange(s, first + 1, h.min, range);
    bindRange(s, first + 2, h.max, range);
    s.bind(first + 3, h.finiteL2);
}

void bindCounts(Statement &s, int first, const TensorHealth &h)
{
    if (!h.present) {
        for (int i = 0; i < 3; ++i)
            s.bindNull(first + i);
        return;
    }
    s.bind(first, h.nan).bind(first + 1, h.posInf).bind(first + 2, h.negInf);
}

TensorHealth readHealthValues(const Statement &s, int first, Range range)
{
    TensorHealth h;
    if (s.isNull(first))
        return h;
    h.present = true;
    h.numel = s.integer(first);
    h.min = readRange(s, first + 1, range);
    h.max = readRange(s, first + 2, range);
    h.finiteL2 = s.real(first + 3);
    h.absMax = absMaxOf(h.min, h.max);
    return h;
}

double absMaxOf(double min, double max)
{
    return std::isnan(min) ? std::numeric_limits<double>::quiet_NaN() : std::fmax(std::fabs(min), std::fabs(max));
}

void readCounts(const Statement &s, int first, TensorHealth &h)
{
    h.nan = s.integer(first);
    h.posInf = s.integer(first + 1);
    h.negInf = s.integer(first + 2);
}

}  // namespace nanscope::record
