#pragma once
// A writer replaces an existing file only when it is a NaNScope run file: a typo in a path must
// not turn a script, a checkpoint or a document into a run file (docs/run-file.md, "Replacing a file").
#include <string>

namespace nanscope::record {

// Throws RunFileError, naming `path` and how to replace it on purpose, when `path` exists and is
// neither empty nor a run file of this format or an older one. `overwrite` replaces anything.
void refuseToReplace(const std::string &path, bool overwrite);

// Creates a new run file with its schema beside `path` and renames it over `path`, so that a
// writer that fails halfway leaves the file that was there as it was. Throws RunFileError.
void createRunFile(const std::string &path);

}  // namespace nanscope::record
