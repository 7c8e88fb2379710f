#pragma once
// The run file's format as data, for writers in other languages: the Python recorder reads it
// from python/nanscope/format.json, which `nanscope_format` writes and CTest's `python_format`
// keeps equal to this (docs/run-file.md describes the same format for people).
#include <string>

namespace nanscope {

// One JSON object: format_version, application_id, the schema's SQL in creation order, the
// float32_exponents rows, the steps columns (name, since, written, exported), the health kinds,
// phases, event kinds, precisions and their limits, the summary's and an origin's keys in order,
// and the chunk length.
std::string runFileFormatJson();

}  // namespace nanscope
