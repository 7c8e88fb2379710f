#include "cli_record.h"

#include "cli_args.h"
#include "job_verdict.h"
#include "nanscope/capsule_file.h"
#include "nanscope/job_folder.h"
#include "run_printer.h"
#include "nanscope/recorded_run.h"
#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace nanscope::cli {

void addRecordOptions(Arguments &arguments, RecordOptions &options)
{
    arguments.option("--record", [&](const auto &, const auto &v) { options.path = v; })
        .flag("--overwrite", options.overwrite)
        .option("--record-errors", [&](const auto &flag, const auto &v) {
            if (v != "stop" && v != "continue")
                throw std::invalid_argument(flag + " is stop or continue, got '" + v + "'");
            options.continueWithoutRecording = v == "continue";
        })
        .option("--keep", [&](const auto &flag, const auto &v) {
            const std::optional<KeepPolicy> keep = parseKeepPolicy(v);
            if (!keep)
                throw std::invalid_argument(flag + " is all, auto or a size of at least 1MiB (2GiB, 500MiB), got '" +
                                            v + "'");
            options.keep = *keep;
        });
}

std::unique_ptr<RunRecorder> startRecording(const RecordOptions &options, RunSource &source, std::ostream &err)
{
    if (options.path.empty())
        return nullptr;
    RecorderOptions r;
    r.keep = options.keep;
    r.overwrite = options.overwrite;
    const bool goOn = options.continueWithoutRecording;
    r.onError = [&err, &source, goOn](const std::string &message) {
        err << "nanscope: " << message << (goOn ? " (the run goes on unrecorded)" : " (the run stops)") << '\n';
        if (!goOn)
            source.stop();
    };
    auto recorder = std::make_unique<RunRecorder>(options.path, r);
    source.addObserver(recorder.get());
    return recorder;
}

struct ProgressLine::Impl {
    std::ostream &err;
    std::string what;
    std::mutex mutex;
    int steps = 0;
    std::chrono::steady_clock::time_point begun, last;
    bool tty = isatty(STDERR_FILENO) != 0;
    bool printed = false;
};

ProgressLine::ProgressLine(std::ostream &err, std::string what) : d_(new Impl{err, std::move(what)}) {}

ProgressLine::~ProgressLine()
{
    if (d_->printed && d_->tty)
        d_->err << '\n';
}

void ProgressLine::runStarted(int, const std::vector<Layer> &, const RunConfig &config)
{
    std::lock_guard<std::mutex> lock(d_->mutex);
    d_->steps = stepsToRun(config);
    d_->begun = d_->last = std::chrono::steady_clock::now();
}

void ProgressLine::stepRecorded(const StepRecordPtr &record)
{
    using namespace std::chrono;
    std::lock_guard<std::mutex> lock(d_->mutex);
    const auto now = steady_clock::now();
    // A terminal gets a line rewritten every second; a log file one line every ten.
    if (now - d_->begun < seconds(2) || now - d_->last < (d_->tty ? seconds(1) : seconds(10)))
        return;
    d_->last = now;
    const double elapsed = duration<double>(now - d_->begun).count();
    std::ostringstream line;
    line << "step " << record->step + 1 << '/' << d_->steps << ", " << std::fixed << std::setprecision(0)
         << (record->step + 1) / elapsed << " steps/s, " << d_->what;
    d_->err << (d_->tty ? "\r" : "") << line.str() << (d_->tty ? "\033[K" : "\n") << std::flush;
    d_->printed = true;
}

// The capsules a file keeps, after its summary (in the text report only: `--json` stays the one
// summary object): what `nanscope replay` can compute again, or, for a Python run, show.
static void printCapsules(const std::vector<CapsuleEntry> &capsules, std::ostream &out)
{
    for (const CapsuleEntry &c : capsules) {
        out << "capsule: step " << c.step << " (" << c.reason << "), " << std::fixed << std::setprecision(1)
            << double(c.bytes) / 1024.0 << " KiB" << std::defaultfloat;
        if (c.snapshotStep >= 0)
            out << ", from the checked-finite state of step " << c.snapshotStep;
        out << " (nanscope replay)\n";
    }
}

// One file's report; `summary`, when given, gets its {"type": "summary", ...} line.
int reportFile(const std::string &path, bool json, std::ostream &out, std::ostream &err,
               nlohmann::ordered_json *summary = nullptr);

int reportCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::string path;
    bool json = false;
    Arguments("report")
        .positional("FILE.nsrun", [&](const auto &, const auto &v) { path = v; })
        .flag("--json", json)
        .parse(args);
    if (path.empty())
        throw std::invalid_argument("report needs a run file: nanscope report FILE.nsrun");
    if (!std::filesystem::is_directory(path))
        return reportFile(path, json, out, err);
    // A job's run folder: the job's verdict, then each rank's report, as one.
    const std::vector<JobRank> ranks = jobRunFiles(path);
    JobVerdict verdict(int(ranks.size()));
    std::ostringstream reports;
    int code = 0;
    for (const JobRank &r : ranks) {
        const int rank = r.rank;
        std::ostringstream one, failed;
        try {
            nlohmann::ordered_json summary;
            code = std::max(code, reportFile(r.path, json, one, failed, &summary));
            verdict.line(rank, nlohmann::json(summary));
            for (const Event &e : RunFile(r.path).readEvents(0))
                verdict.line(rank, {{"type", "event"}, {"kind", eventKindId(e.kind)}, {"text", e.text}});
        } catch (const std::exception &e) {  // a rank's file that cannot be read: the others still report
            failed << e.what() << '\n';
            code = std::max(code, 1);
        }
        std::istringstream lines(one.str());
        if (!json)
            reports << "rank " << rank << " (" << r.path << "):\n";
        for (std::string line; std::getline(lines, line);)
            reports << (json && !line.empty() && line[0] == '{'
                            ? "{\"rank\":" + std::to_string(rank) + "," + line.substr(1)
                            : "  " + line)
                    << '\n';
        // A rank whose run ended on an error (a rank of the job vanished) says so in its place.
        std::istringstream errors(failed.str());
        for (std::string line; std::getline(errors, line);)
            err << "nanscope: rank " << rank << ": " << (line.rfind("nanscope: ", 0) == 0 ? line.substr(10) : line)
                << '\n';
    }
    if (json)
        out << reports.str() << verdict.json().dump() << '\n';
    else
        out << verdict.text() << '\n' << reports.str();
    return code;
}

int reportFile(const std::string &path, bool json, std::ostream &out, std::ostream &err,
               nlohmann::ordered_json *summary)
{
    RecordedRunOptions options;
    options.follow = false;
    RecordedRun run(path, options);  // throws RunFileError: main prints it, exit 1
    RunPrinter printer(out, json, run, false);
    printer.setSummaryOnly(true);
    run.addObserver(&printer);
    run.start();
    run.wait();
    run.removeObserver(&printer);
    const RunSummary s = printer.summary();
    if (summary)
        *summary = printer.summaryLine();
    if (!json)
        printCapsules(runFileCapsules(path), out);
    if (!s.error.empty()) {
        err << "nanscope: " << s.error << '\n';
        return 1;
    }
    return 0;
}

int exportCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::string path, csv;
    bool layers = false;
    Arguments("export")
        .positional("FILE.nsrun", [&](const auto &, const auto &v) { path = v; })
        .option("--csv", [&](const auto &, const auto &v) { csv = v; })
        .flag("--layers", layers)
        .parse(args);
    if (path.empty() || csv.empty())
        throw std::invalid_argument("export needs a run file and --csv OUT.csv");
    RunFile file(path);
    std::ofstream o(csv, std::ios::trunc);
    if (!o) {
        err << "nanscope: " << csv << ": cannot write the CSV file\n";
        return 1;
    }
    const std::int64_t rows = writeRunCsv(file, o, layers);
    o.flush();
    if (!o) {
        err << "nanscope: " << csv << ": writing the CSV file failed (is the disk full?)\n";
        return 1;
    }
    out << "wrote " << rows << " steps" << (layers ? " of per-layer health" : "") << " to " << csv
        << (file.info().finished ? "" : " (the run did not finish)") << '\n';
    return 0;
}

}  // namespace nanscope::cli
