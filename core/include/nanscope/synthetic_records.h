#pragma once
// Made-up step records of a model of any width, for what must be measured at sizes no demo
// reaches: the window's latency and memory (`gui-bench`), the run file's size under a keep policy
// (`bench --record-file`), and tests of the policy.
#include "nanscope/keep_policy.h"
#include "nanscope/records.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nanscope {

// A root and count - 1 Linear layers under it, in blocks of three.
std::vector<Layer> syntheticLayers(int count);

// A record like a real StableModel step: every layer's four healths present, values that drift
// with the step. `nonFinite`: NaN in the forward output and gradient from layer 3 on, born there.
StepRecordPtr syntheticStepRecord(int run, int step, int layers, bool nonFinite);

// `bench --record-file`: `steps` synthetic records of `layers` layers written into `path` under
// `keep`, one step in every `nanEvery` non-finite (0: none).
struct RecordBenchResult {
    std::int64_t steps = 0;
    int layers = 0;
    std::string keep;  // the policy's name
    double seconds = 0;       // writing, until the file is closed
    std::int64_t fileBytes = 0;
    std::int64_t stepsWithLayers = 0;  // steps whose layer rows the file kept
    std::int64_t nonFiniteSteps = 0;
    int sampleEvery = 0;  // the sampled steps' stride at the end
    double openMs = 0;    // opening the file and reading its chunks, as a window's first picture does
    double bytesPerStep() const { return steps > 0 ? double(fileBytes) / double(steps) : 0; }
};
RecordBenchResult benchRecordFile(const std::string &path, std::int64_t steps, int layers, const KeepPolicy &keep,
                                  std::int64_t nanEvery, const std::function<void(std::int64_t step)> &progress);

}  // namespace nanscope
