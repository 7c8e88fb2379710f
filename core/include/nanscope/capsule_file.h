#pragma once
// The capsules a run file keeps (its `capsules` and `embedded_files` tables, docs/run-file.md),
// read back: what `nanscope replay` and `report` list and load.
#include "nanscope/capsule.h"

#include <string>
#include <vector>

namespace nanscope {

// The capsules of run file `path`, in step order: none in a file written before capsules existed.
// Throws RunFileError when the file cannot be read.
std::vector<CapsuleEntry> runFileCapsules(const std::string &path);
// The capsule of `step`. Throws RunFileError when the file has none at that step, naming those it has.
CapsuleBlob readCapsule(const std::string &path, int step);
// The capsule a replay takes unless told which: the first non-finite step's, else the first; -1
// when there is none.
int defaultCapsuleStep(const std::vector<CapsuleEntry> &capsules);
// The bytes of the file embedded in run file `path` under `sha256`; empty when there is none.
std::string readEmbeddedFile(const std::string &path, const std::string &sha256);

}  // namespace nanscope
