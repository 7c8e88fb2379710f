#pragma once
// The run file's schema (docs/run-file.md is its description for users), and the one
// encoding of a TensorHealth as columns, shared by the writer and the reader.
#include "record/sqlite_db.h"

#include "nanscope/health.h"
#include "nanscope/records.h"

#include <vector>

namespace nanscope::record {

// PRAGMA application_id of a run file: "NSRN".
constexpr int kRunFileApplicationId = 0x4E53524E;

// Creates every table and view in an empty database.
void createSchema(Database &db);

// layer_steps is keyed by step * layers + layer: no key columns, rows appended in key order.
inline std::int64_t layerStepKey(std::int64_t step, std::int64_t layer, std::int64_t layers)
{
    return step * layers + layer;
}

// How min and max are stored. Plain: a number (NULL for NaN). Compact (layer_steps, the bulk of a
// file): a value a float holds exactly, as every min and max of a float tensor is, goes in as the
// float's bits in a 4-byte INTEGER; any other value as a number. The layer_health view decodes.
enum class Range { Plain, Compact };

// A health as the columns <prefix>numel, <prefix>min, <prefix>max, <prefix>norm (bound from
// parameter `first` on); numel NULL when nothing was observed. NaN goes in as NULL. The counts
// of non-finite values are bound separately (bindCounts) where a table keeps them inline.
void bindHealthValues(Statement &s, int first, const TensorHealth &h, Range range = Range::Plain);
void bindCounts(Statement &s, int first, const TensorHealth &h);
// The inverse, reading columns from `first` on: numel, min, max, norm. absMax is
// max(|min|, |max|), as every health kernel computes it, so it is not stored.
TensorHealth readHealthValues(const Statement &s, int first, Range range = Range::Plain);
double absMaxOf(double min, double max);  // NaN when min is (nothing finite was seen)
void readCounts(const Statement &s, int first, TensorHealth &h);

// An origin from the columns phase, layer, op, source, produced, explanation (from `first` on), as
// steps stores it; invalid when phase is NULL. `layers` give the layer's path.
Origin readOrigin(const Statement &s, int first, int step, const std::vector<Layer> &layers);

}  // namespace nanscope::record
