#pragma once
// What the window keeps of a run, bounded whatever its length: decimated series for the plots,
// the decimated NaN map, the first origin and the control-change marks. Every step itself is in
// the run's file (the window records each run it trains; the CSV export reads the file). Fed on the GUI thread with
// coalesced records.
#include "run/decimated_series.h"
#include "run/nan_map_data.h"

#include "nanscope/records.h"

#include <string>
#include <vector>

namespace nanscope {

struct ControlMark {
    int step = 0;
    std::string text;  // "lr 0.01", "clip 5"
};

// An overflow forecast about a layer (a `warning` event), marked on the map.
struct WarningMark {
    int step = 0;
    int layer = -1;
    std::string text;
};

class RunStore {
public:
    explicit RunStore(std::size_t seriesCapacity = 2048, std::size_t mapCapacity = 1024);

    void reset(const std::vector<Layer> &layers);
    void append(const StepRecord &record);
    // Steps folded in a run file (a long run opened): the same store as their records one by one,
    // once the buckets are at least a chunk wide.
    void appendChunk(const StepChunk &chunk);
    void addControlMark(int step, const std::string &text);
    void addWarning(int step, int layer, const std::string &text);  // bounded like the control marks
    // Another store's control marks, warnings and first origin: a stretch of a run read back from
    // its file (run/stretch_read.h) marks what the whole run's store marks.
    void copyMarks(const RunStore &from);

    const std::vector<Layer> &layers() const { return layers_; }
    const DecimatedSeries &series(Series s) const { return series_[int(s)]; }
    // The steps whose update was not applied (loss-scale overflow, a skipped batch, a rollback),
    // each with the loss scale of that step: sparse, decimated like the series.
    const DecimatedSeries &skippedSteps() const { return skipped_; }
    bool usesLossScaling() const { return lossScaling_; }
    const NanMapData &map() const { return map_; }
    const std::vector<ControlMark> &controlMarks() const { return marks_; }
    const std::vector<WarningMark> &warnings() const { return warnings_; }
    const Origin &firstOrigin() const { return firstOrigin_; }
    long long stepsSeen() const { return steps_; }
    int lastStep() const { return lastStep_; }

private:
    std::vector<Layer> layers_;
    DecimatedSeries series_[kSeriesCount];
    DecimatedSeries skipped_;
    bool lossScaling_ = false;
    NanMapData map_;
    std::vector<ControlMark> marks_;
    std::vector<WarningMark> warnings_;
    Origin firstOrigin_;
    long long steps_ = 0;
    int lastStep_ = -1;
    std::size_t markCapacity_ = 256;
};

}  // namespace nanscope
