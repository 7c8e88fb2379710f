#pragma once
// The chunk tables of a run file (chunks, chunk_series, chunk_layers): a StepChunk as rows and
// back. They are a summary of the steps kept beside them, so a long run opens without reading
// every step (docs/run-file.md).
#include "record/sqlite_db.h"

#include "nanscope/step_chunk.h"

#include <vector>

namespace nanscope::record {

// chunk_series names a series as seriesName() does; the loss scale of the steps whose update was
// skipped is this one.
constexpr const char *kSkippedSeries = "skipped";

// Chunks of 64 steps (chunks, chunk_series, chunk_layers), or coarse chunks of 1,024 steps (the
// same tables prefixed coarse_, numbered by coarse chunk).
enum class ChunkLevel { Chunk, Coarse };

void writeChunk(Database &db, const StepChunk &chunk, ChunkLevel level = ChunkLevel::Chunk);

// Whether the file has the level's tables (files of an early version 1 have no chunk tables:
// they read step by step; files before version 3 have no coarse ones).
bool hasChunkTables(Database &db, ChunkLevel level = ChunkLevel::Chunk);

// The chunks numbered after `afterChunk` and before `beforeChunk`, in order, at most `maxCount`.
// `layers` are the file's (a chunk's first origin names its layer's path); `run` stamps them.
std::vector<StepChunkPtr> readChunks(Database &db, int afterChunk, int beforeChunk, int maxCount,
                                     const std::vector<Layer> &layers, int run, ChunkLevel level = ChunkLevel::Chunk);

}  // namespace nanscope::record
