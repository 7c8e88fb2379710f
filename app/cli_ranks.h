#pragma once
// Data-parallel jobs from the command line (docs/ranks.md): `run --ranks N` starts N ranks of
// itself on this machine and prints one report; a process started by a launcher that sets
// torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) is one rank of a job.
#include "cli.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace nanscope::cli {

class Arguments;

// --ranks N, --on-bad-rank skip|exclude, --param-check-every K, --collective-timeout S.
void addRankOptions(Arguments &arguments, RunOptions &options);
// This process as one rank, when WORLD_SIZE is set; throws std::invalid_argument with one line
// for values that are not a rank of a job.
void rankFromEnvironment(RunConfig &config);
// Starts options.ranks processes of this program on `args` (a `run` command line), gathers their
// JSON lines and prints them as one report; returns the job's exit code.
int runRanks(const RunOptions &options, const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
// The launcher itself, for any sub-command that a rank runs (`run`, `bench`): `world` processes of
// this program on `args` less --ranks, --record and --json (each gets --json, and with a `folder`
// --record folder/rank-R.nsrun), their output as one report.
int launchRanks(int world, bool json, const std::string &folder, const std::vector<std::string> &args,
                std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
