#pragma once
// What every reader of a run file relies on, checked once where the file is opened: the layers
// form a tree listed parents first, and the steps are numbered from 0 within an int. A file that
// breaks it is refused with one line naming the fault, so no reader loops or indexes out of range.
#include "nanscope/records.h"

#include <string>
#include <vector>

namespace nanscope::record {

class Database;

// The layers, ids 0, 1, 2, ... in order, each parent before its child. Throws RunFileError
// ("PATH: layer 3 is its own ancestor") otherwise.
std::vector<Layer> readCheckedLayers(Database &db, const std::string &path);

// Throws RunFileError when the steps table lacks a column its format version has ("PATH: the file
// is damaged (the steps table has no column loss)"): readers would otherwise show it as zero.
void checkStepColumns(Database &db, const std::string &path, int formatVersion);

// Throws RunFileError when a step number is negative or beyond an int.
void checkStepNumbers(Database &db, const std::string &path);

}  // namespace nanscope::record
