#include "cli_record.h"

#include "cli_args.h"
#include "run_printer.h"
#include "nanscope/recorded_run.h"
#include "nanscope/run_recorder.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <mutex>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace nanscope::cli {

void addRecordOptions(Arguments &arguments, RecordOptions &options)
{
    arguments.option("--record", [&](const auto &, const auto &v) { options.path = v; })
        .option("--record-errors", [&](const auto &flag, const auto &v) {
            if (v != "stop" && v != "continue")
                throw std::invalid_argument(flag + " is stop or continue, got '" + v + "'");
            options.continueWithoutRecording = v == "continue";
        });
}

std::unique_ptr<RunRecorder> startRecording(const RecordOptions &options, RunSource &source, std::ostream &err)
{
    if (options.path.empty())
        return nullptr;
    RecorderOptions r;
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

namespace {

std::string csvNumber(double v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<double>::max_digits10) << v;
    return s.str();
}

std::string csvText(const std::string &t)
{
    if (t.find_first_of(",\"\n\r") == std::string::npos)
        return t;
    std::string out = "\"";
    for (char c : t)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string joined(const std::vector<std::int64_t> &v)
{
    std::string out;
    for (std::int64_t i : v)
        out += (out.empty() ? "" : " ") + std::to_string(i);
    return out;
}

void writeStepRow(std::ostream &o, const StepRecord &r, const std::vector<Layer> &layers)
{
    const Origin &g = r.origin;
    o << r.step << ',' << csvNumber(r.loss) << ',' << csvNumber(r.gradNorm) << ',' << csvNumber(r.gradNormClipped)
      << ',' << csvNumber(r.learningRate) << ',' << csvNumber(r.lossScale) << ',' << int(r.skipped) << ','
      << int(r.rolledBack) << ',' << csvText(r.why) << ',' << csvNumber(r.stepMillis) << ',' << int(r.nonFinite())
      << ',' << (g.valid() ? phaseName(g.phase) : "") << ','
      << csvText(g.valid() && g.layer >= 0 && g.layer < int(layers.size()) ? layers[std::size_t(g.layer)].path : "")
      << ',' << csvText(g.op) << ',' << joined(r.badSamples) << ',' << joined(r.quarantined) << '\n';
}

void writeLayerRows(std::ostream &o, const StepRecord &r, const std::vector<Layer> &layers)
{
    for (std::size_t i = 0; i < r.layers.size() && i < layers.size(); ++i) {
        const LayerHealth &lh = r.layers[i];
        const std::pair<const char *, const TensorHealth *> kinds[] = {
            {"forward", &lh.forward}, {"grad", &lh.grad}, {"params", &lh.params}, {"param_grads", &lh.paramGrads}};
        for (const auto &[kind, h] : kinds) {
            if (!h->present)
                continue;
            o << r.step << ',' << i << ',' << csvText(layers[i].path) << ',' << kind << ',' << h->numel << ','
              << h->nan << ',' << h->posInf << ',' << h->negInf << ',' << csvNumber(h->min) << ','
              << csvNumber(h->max) << ',' << csvNumber(h->absMax) << ',' << csvNumber(h->finiteL2) << '\n';
        }
    }
}

}  // namespace

int reportCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::string path;
    bool json = false;
    Arguments("report").positional("FILE.nsrun", [&](const auto &, const auto &v) { path = v; }).flag("--json", json).parse(args);
    if (path.empty())
        throw std::invalid_argument("report needs a run file: nanscope report FILE.nsrun");
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
    if (layers)
        o << "step,layer,path,kind,numel,nan,posinf,neginf,min,max,absmax,norm\n";
    else
        o << "step,loss,grad_norm,grad_norm_clipped,lr,loss_scale,skipped,rolled_back,why,step_ms,nonfinite,"
             "origin_phase,origin_layer,origin_op,bad_samples,quarantined\n";
    int last = -1;
    std::int64_t rows = 0;
    for (;;) {
        const std::vector<StepRecordPtr> steps = file.readSteps(last, 2048, layers);
        for (const StepRecordPtr &r : steps) {
            if (layers)
                writeLayerRows(o, *r, file.layers());
            else
                writeStepRow(o, *r, file.layers());
            last = r->step;
            ++rows;
        }
        if (steps.size() < 2048)
            break;
    }
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
