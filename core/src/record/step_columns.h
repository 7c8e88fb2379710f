#pragma once
// The steps table, defined once: each column's name, its declaration, the format version that
// added it, and how a StepRecord's value goes in, comes out and is exported. The schema, the
// writer, the reader and the CSV export are built from this list, by name; docs/run-file.md
// describes the columns for users.
#include "record/sqlite_db.h"

#include "nanscope/records.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nanscope::record {

// What a reader knows beside a row: the layers (an origin's path) and the run's precision (for a
// file written before steps said theirs).
struct StepReadContext {
    const std::vector<Layer> &layers;
    Precision runPrecision;
};

struct StepColumn {
    std::string name;
    std::string declaration;  // after the name in CREATE TABLE; "" for a measured value (no type)
    int since = 1;            // the format version that added it
    // Binds the record's value to parameter i; empty for a generated column (never written).
    std::function<void(Statement &, int i, const StepRecord &)> bind;
    // Sets the record's value from result column i; empty for a generated column.
    std::function<void(const Statement &, int i, StepRecord &, const StepReadContext &)> read;
    // The value as a CSV field of `nanscope export`; empty: not exported.
    std::function<std::string(const StepRecord &, const std::vector<Layer> &)> csv;
};

// In table order; a column added later goes at the end (ALTER TABLE ADD COLUMN's place).
const std::vector<StepColumn> &stepColumns();

std::string stepsTableSql();  // CREATE TABLE steps (...)

// Writes a record with every written column.
class StepInsert {
public:
    explicit StepInsert(Database &db);
    // `detail`: what the writer keeps of its layers, in place of the record's own layerDetail.
    void run(const StepRecord &r, std::optional<LayerDetail> detail = std::nullopt);

private:
    std::vector<const StepColumn *> columns_;
    Statement insert_;
};

// Reads records with the columns a file's steps table has: an earlier layout lacks the newer ones,
// whose values keep their defaults.
class StepSelect {
public:
    explicit StepSelect(Database &db);
    // Steps after `afterStep`, at most `maxCount`, in step order, one at a time.
    void start(int afterStep, int maxCount);
    bool next(StepRecord &r, const StepReadContext &context);

private:
    std::vector<const StepColumn *> columns_;
    Statement select_;
};

// The columns a file of `formatVersion` must have and lacks: a damaged file, not an earlier layout.
std::vector<std::string> missingStepColumns(Database &db, int formatVersion);

// CSV: a header of the exported columns' names (and the derived `nonfinite`) and one row a step.
std::string stepCsvHeader();
std::string stepCsvRow(const StepRecord &r, const std::vector<Layer> &layers);

// Non-finite numbers as NaN, inf and -inf, which pandas and spreadsheets read; every finite
// double with the digits that give it back exactly.
std::string csvNumber(double v);
std::string csvText(const std::string &t);  // quoted when it holds a comma, a quote or a line break

}  // namespace nanscope::record
