#pragma once
// Every step's scalars for the CSV export, spilled to an anonymous temporary file as they arrive:
// the export is complete for any run length while the window's memory stays bounded.
#include "nanscope/records.h"

#include <cstdio>
#include <string>

namespace nanscope {

class StepTable {
public:
    StepTable();
    ~StepTable();
    StepTable(const StepTable &) = delete;
    StepTable &operator=(const StepTable &) = delete;

    void clear();
    void append(const StepRecord &record);
    long long rowCount() const { return rows_; }
    // Writes a header and one line per step; non-finite numbers as nan, inf, -inf (what pandas and
    // spreadsheets read). Returns false with a message when the file cannot be written.
    bool writeCsv(const std::string &path, std::string *error) const;

private:
    struct Row {
        double loss, gradNorm, gradNormClipped, learningRate, lossScale, stepMillis;
        int step, nonFiniteLayers;
        unsigned char skipped, rolledBack, nonFinite, phase;
    };
    std::FILE *file_ = nullptr;
    long long rows_ = 0;
    bool failed_ = false;
};

}  // namespace nanscope
