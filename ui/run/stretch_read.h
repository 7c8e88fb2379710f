#pragma once
// A stretch of a run read back from its run file when the user zooms into it. The window's
// RunStore keeps buckets as wide as the whole run needs (a coarse chunk of 1,024 steps for a run
// of a million); the file keeps every step's row (its layers in full where the keep policy kept
// them, its chunk's elsewhere), 64-step chunks and 1,024-step coarse chunks. readStretch() fills a
// store of the stretch alone from the finest of these whose pieces fit a view, so memory and
// reading time are bounded by the screen, not by the stretch.
#include "run/run_store.h"

#include <functional>
#include <memory>
#include <vector>

namespace nanscope {

class RunFile;

// Single steps, 64-step chunks or 1,024-step coarse chunks.
enum class StretchLevel { Steps, Chunks, CoarseChunks };

// The map columns of a stretch's store for a model of `layers` layers: a bounded number of cells
// (a 600-module model gets 250 columns, a 13-layer one 1,024), since the window's own store is
// in memory beside it.
std::size_t stretchMapColumns(std::size_t layers);
// The finest level at which `steps` steps of a `layers`-layer model are at most four pieces a
// map column (and at most one a series bucket).
StretchLevel stretchLevel(int steps, std::size_t layers);

// An empty store for a stretch, with `whole`'s control marks, warnings and first origin (the
// file's events are in the window's store already). Made on the GUI thread, filled by readStretch.
std::shared_ptr<RunStore> stretchStore(const RunStore &whole);

// Reads steps firstStep..lastStep of `file` into `store` at `level`, falling back to a finer one
// where the file has no coarser pieces (files of older writers, the run's last chunks). Returns
// false when `cancelled` said so between reads. Throws RunFileError.
bool readStretch(const RunFile &file, RunStore &store, int firstStep, int lastStep, StretchLevel level,
                 const std::function<bool()> &cancelled = {});

// The buckets of `whole` with those of `stretch` in the steps it covers (its first to its last
// step): what a plot draws while zoomed into a stretch.
std::vector<SeriesBucket> withStretch(const std::vector<SeriesBucket> &whole, const DecimatedSeries *stretch);

}  // namespace nanscope
