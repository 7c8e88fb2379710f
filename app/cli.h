#pragma once
// The headless command line: `nanscope scenarios | run | report | export | diff | replay | inspect | bench | steer` (gui-bench is the
// window's own). Plain C++ over the core: CLI11 reads the arguments, nlohmann/json writes JSON.
#include "cli_record.h"
#include "nanscope/run_config.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace nanscope::cli {

struct RunOptions {
    RunConfig config;
    bool json = false;
    RecordOptions record;
    int ranks = 0;  // --ranks N: start a job of N ranks on this machine (cli_ranks.h)
};

// Parses `run` arguments (args[0] is "run"); throws std::invalid_argument with a one-line
// message, or HelpRequested (cli_args.h) for -h/--help.
RunOptions parseRunOptions(const std::vector<std::string> &args);

bool isSubcommand(const std::string &arg);
// The sub-commands' names joined by SEPARATOR, in the order help texts list them.
std::string subcommandList(const std::string &separator = " | ");
// `nanscope --version`: "nanscope 0.1.0 (LibTorch 1.13.1, BUILD)\n"; BUILD says which program it is.
std::string versionLine(const std::string &build);
// Runs a sub-command; returns the process exit code.
int runSubcommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
