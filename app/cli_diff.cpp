#include "cli_diff.h"

#include "cli_args.h"
#include "nanscope/job_folder.h"
#include "nanscope/run_diff.h"
#include "nanscope/run_file.h"

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace nanscope::cli {

namespace {

struct DiffOptions {
    std::vector<std::string> paths;
    double tolerance = 0.0;
    bool json = false;
    std::vector<int> ranks;  // a job folder's two ranks
};

double toleranceFrom(const std::string &flag, const std::string &value)
{
    std::size_t used = 0;
    double v = -1.0;
    try {
        v = std::stod(value, &used);
    } catch (const std::exception &) {
    }
    if (used != value.size() || !(v >= 0.0 && v < 1.0))
        throw std::invalid_argument(flag + " must be a relative difference from 0 up to 1 (1e-6, say), not '" +
                                    value + "'");
    return v;
}

std::vector<int> ranksFrom(const std::string &flag, const std::string &value)
{
    std::vector<int> ranks;
    std::istringstream in(value);
    for (std::string part; std::getline(in, part, ',');) {
        std::size_t used = 0;
        int r = -1;
        try {
            r = std::stoi(part, &used);
        } catch (const std::exception &) {
        }
        if (used != part.size() || r < 0)
            throw std::invalid_argument(flag + " takes two ranks, R,S (0,1, say), not '" + value + "'");
        ranks.push_back(r);
    }
    if (ranks.size() != 2 || ranks[0] == ranks[1])
        throw std::invalid_argument(flag + " takes two different ranks, R,S (0,1, say), not '" + value + "'");
    return ranks;
}

// The two files to compare: the two paths, or two ranks of one job's folder.
std::pair<std::string, std::string> filesToCompare(const DiffOptions &o)
{
    if (!o.ranks.empty()) {
        if (o.paths.size() != 1 || !std::filesystem::is_directory(o.paths[0]))
            throw std::invalid_argument("--ranks R,S compares two ranks of one job: nanscope diff FOLDER --ranks 0,1");
        std::string found[2];
        for (const JobRank &r : jobRunFiles(o.paths[0]))
            for (int i = 0; i < 2; ++i)
                if (r.rank == o.ranks[std::size_t(i)])
                    found[i] = r.path;
        for (int i = 0; i < 2; ++i)
            if (found[i].empty())
                throw RunFileError(o.paths[0] + ": the job has no run file of rank " +
                                   std::to_string(o.ranks[std::size_t(i)]));
        return {found[0], found[1]};
    }
    if (o.paths.size() != 2)
        throw std::invalid_argument("diff compares two run files: nanscope diff A.nsrun B.nsrun");
    for (const std::string &p : o.paths)
        if (std::filesystem::is_directory(p))
            throw std::invalid_argument(p + " is a folder: compare two of a job's ranks with nanscope diff " + p +
                                        " --ranks R,S");
    return {o.paths[0], o.paths[1]};
}

std::string sourceOf(const RunFile &f)
{
    std::ostringstream o;
    o << runSource(f.info().config);
    if (f.info().worldSize > 0)
        o << ", rank " << f.info().rank << " of " << f.info().worldSize;
    return o.str();
}

void printText(const RunDiff &d, const RunFile &a, const RunFile &b, std::ostream &out)
{
    out << "a: " << a.path() << " (" << sourceOf(a) << ", " << d.stepsA << " steps)\n"
        << "b: " << b.path() << " (" << sourceOf(b) << ", " << d.stepsB << " steps)\n";
    if (d.settings.empty()) {
        out << "settings: the same\n";
    } else {
        out << "settings that differ (a | b):\n";
        std::size_t width = 0;
        for (const SettingDifference &s : d.settings)
            width = std::max(width, s.key.size());
        for (const SettingDifference &s : d.settings)
            out << "  " << std::left << std::setw(int(width)) << s.key << std::right << "  " << s.a << " | " << s.b
                << '\n';
    }
    for (const auto &[only, name] : {std::pair{&d.layersOnlyInA, "a"}, std::pair{&d.layersOnlyInB, "b"}})
        if (!only->empty()) {
            out << "layers only in " << name << ":";
            for (const std::string &p : *only)
                out << " '" << p << "'";
            out << '\n';
        }
    out << "steps: " << d.stepsCompared << " compared"
        << (d.tolerance > 0 ? " within a relative " + (std::ostringstream() << d.tolerance).str() : " bit for bit");
    if (d.stepsA != d.stepsB)
        out << "; " << (d.stepsA > d.stepsB ? "a" : "b") << " is longer (" << d.stepsA << " against " << d.stepsB
            << " steps)";
    out << '\n';
    const RunParting &p = d.parting;
    if (p.step < 0) {
        out << "identical over every step they share\n";
    } else {
        out << "parted at step " << p.step << ": ";
        if (p.what == "input" || p.what == "loss")
            out << "the " << p.what;
        else
            out << healthKindWithId(p.what)->label << " of layer '" << p.layer << "'";
        out << ", " << p.detail << (p.paramsDiffer && p.what != "params" ? " (its parameters differ too)" : "")
            << (p.inputDiffers && p.what != "input" ? " (the input batches differ)" : "") << '\n';
        std::string same;
        for (const HealthKindInfo &k : kHealthKinds)
            if (d.identicalThroughout[std::size_t(k.kind)])
                same += std::string(same.empty() ? "" : ", ") + k.label;
        if (!same.empty())
            out << "identical throughout: " << same << '\n';
    }
    auto failure = [&](const char *name, int failed) {
        out << name << ": ";
        if (failed < 0)
            out << "never non-finite";
        else
            out << "non-finite first at step " << failed
                << (p.step >= 0 && p.step <= failed ? ", the runs apart since step " + std::to_string(p.step)
                                                    : ", the runs identical until then");
        out << '\n';
    };
    failure("a", d.firstFailedA);
    failure("b", d.firstFailedB);
}

}  // namespace

int diffCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    DiffOptions o;
    Arguments("diff")
        .positional("A.nsrun", [&](const auto &, const auto &v) { o.paths.push_back(v); })
        .positional("B.nsrun", [&](const auto &, const auto &v) { o.paths.push_back(v); })
        .option("--tolerance", [&](const auto &f, const auto &v) { o.tolerance = toleranceFrom(f, v); })
        .option("--ranks", [&](const auto &f, const auto &v) { o.ranks = ranksFrom(f, v); })
        .flag("--json", o.json)
        .parse(args);
    const auto [pathA, pathB] = filesToCompare(o);
    const RunFile a(pathA);
    const RunFile b(pathB);
    // A long comparison says how far it got, at most once a second, on stderr.
    auto last = std::chrono::steady_clock::now();
    const std::int64_t total = a.stats().steps + b.stats().steps;
    const RunDiff d = diffRuns(a, b, o.tolerance, [&](std::int64_t read) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last >= std::chrono::seconds(1)) {
            err << "comparing: " << read << " of " << total << " steps read\n";
            last = now;
        }
    });
    if (o.json)
        out << runDiffJson(d, pathA, pathB).dump() << '\n';
    else
        printText(d, a, b, out);
    return 0;
}

}  // namespace nanscope::cli
