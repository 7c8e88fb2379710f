#include "cli.h"

#include "cli_args.h"
#include "cli_bench.h"
#include "cli_diff.h"
#include "cli_model.h"
#include "cli_ranks.h"
#include "cli_replay.h"
#include "cli_steer.h"
#include "run_printer.h"
#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"
#include "nanscope/scenario.h"
#include "nanscope/session.h"
#include "nanscope/version.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace nanscope::cli {

namespace {

std::string numberText(double v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

int listScenarios(const std::vector<std::string> &args, std::ostream &out)
{
    Arguments("scenarios").parse(args);  // takes no options: refuses any, answers --help
    for (const ScenarioInfo &s : scenarios()) {
        out << std::left << std::setw(20) << s.id << std::right << ' ' << s.title << '\n';
        if (s.fix.exists())
            out << std::string(21, ' ') << "--fix: " << s.fix.name << " ("
                << (s.fix.hasValue() ? s.fix.valueName + " " + numberText(s.fix.defaultValue) + ", " : std::string())
                << (s.fix.atStart ? "from the start" : "at the next step") << "): " << s.fix.what << '\n';
    }
    return 0;
}

int runCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    RunOptions opts = parseRunOptions(args);
    if (opts.ranks > 0)
        return runRanks(opts, args, out, err);
    rankFromEnvironment(opts.config);
    if (const std::string missing = missingModelInput(opts.config); !missing.empty()) {
        err << "nanscope: " << missing << '\n';
        return 1;
    }
    Session session;
    const bool pause = opts.config.controls && opts.config.controls->pauseOnNonFinite;
    RunPrinter printer(out, opts.json, session, pause);
    session.addObserver(&printer);
    std::unique_ptr<RunRecorder> recorder;
    try {
        recorder = startRecording(opts.record, session, err);
    } catch (const RunFileError &e) {
        err << "nanscope: cannot record the run: " << e.what() << '\n';
        return 1;
    }
    std::optional<ProgressLine> progress;
    if (recorder) {
        progress.emplace(err, "recording to " + opts.record.path);
        session.addObserver(&*progress);
    }
    std::string error;
    if (!session.start(opts.config, &error)) {
        err << "nanscope: " << error << '\n';
        if (recorder) {  // nothing ran: leave no empty run file behind
            session.removeObserver(&*progress);
            session.removeObserver(recorder.get());
            recorder->close();
            std::remove(opts.record.path.c_str());
        }
        return 2;
    }
    session.wait();
    session.removeObserver(&printer);
    if (recorder) {
        session.removeObserver(&*progress);
        session.removeObserver(recorder.get());
        recorder->close();
    }
    const RunSummary s = printer.summary();
    if (!s.error.empty()) {
        err << "nanscope: " << s.error << '\n';
        return 1;
    }
    // A recording that failed was reported when it did; it fails the command unless asked not to.
    return recorder && !recorder->error().empty() && !opts.record.continueWithoutRecording ? 1 : 0;
}

}  // namespace

namespace {

// bitflip@STEP:LAYER, or bitflip@STEP:LAYER:RANK in a job (module paths hold no colon)
FaultInjection parseFault(const std::string &flag, const std::string &value)
{
    const std::string kind = "bitflip@";
    const auto colon = value.find(':');
    if (value.rfind(kind, 0) != 0 || colon == std::string::npos || colon + 1 >= value.size())
        throw std::invalid_argument(flag + " is bitflip@STEP:LAYER[:RANK] (a module path such as fc1), got '" + value +
                                    "'");
    FaultInjection f;
    f.step = parseInt(flag, value.substr(kind.size(), colon - kind.size()), 0);
    f.layer = value.substr(colon + 1);
    if (const auto last = f.layer.rfind(':'); last != std::string::npos) {
        f.rank = parseInt(flag + "'s RANK", f.layer.substr(last + 1), 0);
        f.layer.resize(last);
    }
    return f;
}

// nan-sample@STEP, or nan-sample@RANK:STEP in a job
SampleInjection parseSampleInjection(const std::string &flag, const std::string &value)
{
    const std::string kind = "nan-sample@";
    if (value.rfind(kind, 0) != 0 || value.size() == kind.size())
        throw std::invalid_argument(flag + " is nan-sample@STEP, or nan-sample@RANK:STEP in a job, got '" + value +
                                    "'");
    SampleInjection bad;
    const std::string where = value.substr(kind.size());
    const auto colon = where.find(':');
    if (colon == std::string::npos) {
        bad.step = parseInt(flag + "'s STEP", where, 0);
    } else {
        bad.rank = parseInt(flag + "'s RANK", where.substr(0, colon), 0);
        bad.step = parseInt(flag + "'s STEP", where.substr(colon + 1), 0);
    }
    return bad;
}

// --fix and --fix-value: the scenario's fix on, with its default value or the one given.
double scenarioFixValue(const RunConfig &config, std::optional<double> value)
{
    const ScenarioFix fix = scenarioFix(config.scenario);
    if (config.usesModelFile() || !fix.exists())
        throw std::invalid_argument("--fix: " + (config.usesModelFile() ? std::string("a model file") : "scenario '" + config.scenario + "'") +
                                    " has no fix of its own (see `nanscope scenarios`); its lesson's fix is a general control");
    if (value && !fix.hasValue())
        throw std::invalid_argument("--fix-value: the " + fix.name + " of '" + config.scenario + "' is a switch without a value");
    return value.value_or(fix.defaultValue);
}

}  // namespace

RunOptions parseRunOptions(const std::vector<std::string> &args)
{
    RunOptions o;
    RunConfig &config = o.config;
    std::optional<double> lr, clip, lossScale, fixValue;
    std::optional<Precision> precision;
    bool clipOff = false, pause = false, lossScaleOff = false, fix = false;
    std::optional<RecoveryPolicy> recovery;
    bool haveScenario = false, noCapsule = false;
    Arguments arguments("run");
    arguments
        .option("--scenario",
                [&](const auto &, const auto &v) {
                    config.scenario = v;
                    haveScenario = true;
                })
        .option("--steps", [&](const auto &flag, const auto &v) { config.steps = parseInt(flag, v, 1); })
        .option("--seed", [&](const auto &flag, const auto &v) { config.seed = std::uint64_t(parseInt(flag, v, 0)); })
        .option(
            "--forecast-horizon",
            [&](const auto &flag, const auto &v) { config.forecastHorizon = v == "off" ? 0 : parseInt(flag, v, 0); })
        .option("--device", [&](const auto &flag, const auto &v) { config.device = parseDevice(flag, v); })
        .option("--lr",
                [&](const auto &flag, const auto &v) {
                    lr = parseNumber(flag, v);
                    if (*lr <= 0)
                        throw std::invalid_argument(flag + " must be positive");
                })
        .option("--clip",
                [&](const auto &flag, const auto &v) {
                    clip = parsePositiveOrOff(flag, v);
                    clipOff = !clip;
                })
        .option("--recovery",
                [&](const auto &flag, const auto &v) {
                    if (v == "none")
                        recovery = RecoveryPolicy::none();
                    else if (v == "skip")
                        recovery = RecoveryPolicy::skipOnly();
                    else if (v == "full")
                        recovery = RecoveryPolicy::full();
                    else
                        throw std::invalid_argument(flag + " is none, skip or full, got '" + v + "'");
                })
        .option("--precision",
                [&](const auto &flag, const auto &v) {
                    precision = parsePrecision(v);
                    if (!precision)
                        throw std::invalid_argument(flag + " is fp32, fp16 or bf16, got '" + v + "'");
                })
        .option("--loss-scale",
                [&](const auto &flag, const auto &v) {
                    lossScale = parsePositiveOrOff(flag, v);
                    lossScaleOff = !lossScale;
                })
        .flag("--pause-on-nonfinite", pause)
        .flag("--fix", fix)
        .option("--fix-value",
                [&](const auto &flag, const auto &v) {
                    fixValue = parseNumber(flag, v);
                    if (!(*fixValue > 0))
                        throw std::invalid_argument(flag + " must be positive, got '" + v + "'");
                })
        .option("--batch", [&](const auto &flag, const auto &v) { config.batchSize = parseInt(flag, v, 1); })
        .option("--bn-eps", [&](const auto &flag, const auto &v) { config.bnEps = parseNumber(flag, v); })
        .option("--optimizer",
                [&](const auto &flag, const auto &v) {
                    config.optimizer.kind = parseOptimizer(v);
                    if (!config.optimizer.kind)
                        throw std::invalid_argument(flag + " is sgd, adam or adamw, got '" + v + "'");
                })
        .option("--momentum",
                [&](const auto &flag, const auto &v) {
                    config.optimizer.momentum = parseNumber(flag, v);
                    if (*config.optimizer.momentum < 0 || *config.optimizer.momentum >= 1)
                        throw std::invalid_argument(flag + " must lie in [0, 1), got '" + v + "'");
                })
        .option("--weight-decay",
                [&](const auto &flag, const auto &v) {
                    config.optimizer.weightDecay = parseNumber(flag, v);
                    if (*config.optimizer.weightDecay < 0)
                        throw std::invalid_argument(flag + " must be >= 0, got '" + v + "'");
                })
        .flag("--json", o.json)
        .repeatable("--capsule-at",
                    [&](const auto &flag, const auto &v) { config.capsuleSteps.push_back(parseInt(flag, v, 0)); })
        .flag("--no-capsule", noCapsule)
        .option("--inject-fault", [&](const auto &flag, const auto &v) { config.fault = parseFault(flag, v); })
        .option("--inject", [&](const auto &flag, const auto &v) { config.nanSample = parseSampleInjection(flag, v); })
        .option("--save", [&](const auto &, const auto &v) { config.savePath = v; });
    addModelOptions(arguments, config);
    addRecordOptions(arguments, o.record);
    addRankOptions(arguments, o);
    arguments.parse(args);
    config.capsuleOnFailure = !noCapsule;
    const bool model = !o.config.modelPath.empty();
    if (haveScenario == model)
        throw std::invalid_argument("run needs --scenario ID (see `nanscope scenarios`) or --model FILE.pt, not both");
    if (!model && !o.config.savePath.empty())
        throw std::invalid_argument("--save writes a TorchScript model: it needs --model FILE.pt");
    if (!model && !findScenario(o.config.scenario))
        throw std::invalid_argument("unknown scenario '" + o.config.scenario + "' (see `nanscope scenarios`)");
    Controls c = defaultControls(o.config);
    if (lr)
        c.learningRate = *lr;
    if (clip)
        c.clipNorm = clip;
    if (clipOff)
        c.clipNorm.reset();
    if (recovery)
        c.recovery = *recovery;
    if (precision)
        c.precision = *precision;
    if (lossScale)
        c.lossScaling.initialScale = *lossScale;
    if (lossScaleOff)
        c.lossScaling.enabled = false;
    c.pauseOnNonFinite = pause;
    if (fix || fixValue)
        c.fix = scenarioFixValue(o.config, fixValue);
    o.config.controls = c;
    return o;
}

namespace {

// `nanscope CMD --help`: the synopsis of each sub-command, as the README gives it.
const char *usage(const std::string &command)
{
    if (command == "scenarios")
        return "usage: nanscope scenarios\n"
               "  lists the demo scenarios: id and a one-line description\n";
    if (command == "run")
        return "usage: nanscope run --scenario ID [--steps N] [--seed S] [--device cpu|cuda] [--lr X]\n"
               "                    [--clip X|off] [--recovery none|skip|full] [--pause-on-nonfinite]\n"
               "                    [--fix [--fix-value X]] [--batch N] [--bn-eps X] [--precision fp32|fp16|bf16]\n"
               "                    [--loss-scale X|off] [--optimizer sgd|adam|adamw] [--momentum X]\n"
               "                    [--weight-decay X] [--forecast-horizon N|off] [--json]\n"
               "                    [--record FILE.nsrun [--overwrite] [--record-errors stop|continue]\n"
               "                    [--keep all|auto|SIZE]]\n"
               "                    [--capsule-at STEP]... [--no-capsule] [--inject-fault bitflip@STEP:LAYER[:RANK]]\n"
               "                    [--inject nan-sample@[RANK:]STEP]\n"
               "                    [--ranks N] [--on-bad-rank skip|exclude] [--param-check-every K]\n"
               "                    [--collective-timeout S] [--backend auto|gloo|nccl]\n"
               "       nanscope run --model FILE.pt (--input-shape 8x3x64x64 | --inputs X.pt [--targets Y.pt])\n"
               "                    [--input-dtype float32|int64] [--vocab V] [--output KEY|INDEX]\n"
               "                    [--loss cross-entropy|mse|model] [--save OUT.pt] [any option above]\n"
               "  a forward with several inputs takes one --input-shape each (8x32:int64, 8x32:bool)\n"
               "  or one --inputs file each, or one file holding a tuple, list or dict of them\n"
               "  trains, prints progress and a report: the first non-finite step and its origin\n"
               "  (phase, layer, op); --json: one JSON object per step, event and summary;\n"
               "  --fix: the scenario's own fix, the one its lesson teaches (`nanscope scenarios` names it);\n"
               "  --fix-value: its eps instead of the default;\n"
               "  --forecast-horizon: warn of an overflow or a vanishing value this many steps ahead\n"
               "  (default 50; off: no forecasts);\n"
               "  --record: also into a run file that `report`, `export`, `replay` and the window open\n"
               "  (a file there is replaced only when it is a run file; --overwrite: any file);\n"
               "  it keeps a capsule of the first non-finite step (unless --no-capsule) and of each\n"
               "  --capsule-at step; --inject-fault flips one exponent bit of LAYER's largest weight\n"
               "  while STEP computes (a transient fault, restored before the update); --inject puts NaN\n"
               "  into the first sample of STEP's batch (of RANK's in a job); --backend: the ranks'\n"
               "  collectives, NCCL between GPUs (one per rank) or Gloo through host memory (auto:\n"
               "  NCCL when every rank of a CUDA job has a GPU of its own)\n";
    if (command == "replay")
        return "usage: nanscope replay FILE.nsrun|FOLDER [--rank R] [--step N] [--device cpu|cuda]\n"
               "                       [--threads N] [--no-samples] [--no-what-if] [--json]\n"
               "  computes a step again from its capsule (default: the first non-finite step's) and\n"
               "  compares it with the record: reproduced (bit for bit), reproduced-numerically or\n"
               "  not-reproduced, the first layer that differs; the origin at op level; the samples\n"
               "  that make it fail; and which changes keep it finite, at the step and from the last\n"
               "  checked-finite snapshot\n";
    if (command == "report")
        return "usage: nanscope report FILE.nsrun|FOLDER [--json]\n"
               "  the final report (or JSON summary) of a recorded run, as `run` printed it;\n"
               "  a run whose writer did not finish reports the steps the file holds; a job's run\n"
               "  folder (run --ranks N --record FOLDER) reports each rank's\n";
    if (command == "diff")
        return "usage: nanscope diff A.nsrun B.nsrun [--tolerance REL] [--json]\n"
               "       nanscope diff FOLDER --ranks R,S [--tolerance REL] [--json]\n"
               "  compares two runs: the settings that differ, the first step where their\n"
               "  measurements part (the layer and kind of health: forward, backward, parameters or\n"
               "  their gradients), and where each went non-finite; bit for bit, or --tolerance: a\n"
               "  relative difference on min, max and norm (NaN/Inf counts always exactly); steps\n"
               "  matched by number, layers by path; --ranks: two ranks of one job's run folder\n";
    if (command == "export")
        return "usage: nanscope export FILE.nsrun --csv OUT.csv [--layers]\n"
               "  one CSV row a step; --layers: one row a step, layer and kind of health\n";
    if (command == "steer")
        return "usage: nanscope steer FILE.nsrun|FOLDER [--lr X] [--clip X|off]\n"
               "                      [--policy record|skip|rollback|raise|pause]\n"
               "                      [--decide continue|skip|rollback|stop] [--timeout S]\n"
               "  asks the Python loop recording into FILE (nanscope.record) to change its learning\n"
               "  rate, clipping or on_nonfinite policy from its next step, or decides its paused step;\n"
               "  prints what the loop acknowledged and exits 0, or 1 with the reason when it refused\n"
               "  or no loop reads the file (--timeout: seconds to wait, default 60); a job's FOLDER:\n"
               "  every rank, a change at one step on all of them\n";
    if (command == "inspect")
        return "usage: nanscope inspect FILE.pt (--input-shape 8x3x64x64 | --inputs X.pt [--targets Y.pt])\n"
               "                        [--input-dtype float32|int64] [--vocab V] [--output KEY|INDEX]\n"
               "                        [--loss cross-entropy|mse|model] [--seed S] [--device cpu|cuda] [--json]\n"
               "  one forward and backward pass: each module's health and the first producer of a\n"
               "  non-finite value\n";
    return "usage: nanscope bench [--rounds N] [--only mlp|cnn|deep] [--json]\n"
           "       nanscope bench --model FILE.pt --input-shape 8x3x64x64 [--rounds N] [--json]\n"
           "       nanscope bench --replay [--rounds N] [--json]\n"
           "       nanscope bench --ranks N [--rounds N] [--steps N] [--only mlp|cnn|deep] [--device cpu|cuda]\n"
           "                      [--backend auto|gloo|nccl] [--json]\n"
           "       nanscope bench --record-file FILE.nsrun [--layers N] [--steps N] [--keep all|auto|SIZE]\n"
           "                      [--nan-every N] [--json]\n"
           "  median step time with the probe off, with the full map, with the full map recorded\n"
           "  into a run file and with op-level checks, interleaved in one run, and their ratios;\n"
           "  --replay: what replaying a capsule costs, and the replays a bisection takes;\n"
           "  --ranks: a data-parallel step with the map and the ranks' arbitration against a plain one;\n"
           "  --record-file: a run file written from made-up records of a wide model, its size and cost\n";
}

}  // namespace

namespace {
// In the order help texts list them.
constexpr std::array<const char *, 9> kSubcommands{"scenarios", "run",     "report", "export", "diff",
                                                   "replay",    "inspect", "bench",  "steer"};
}  // namespace

bool isSubcommand(const std::string &arg)
{
    return std::find(kSubcommands.begin(), kSubcommands.end(), arg) != kSubcommands.end();
}

std::string subcommandList(const std::string &separator)
{
    std::string list;
    for (const char *name : kSubcommands)
        list += (list.empty() ? "" : separator) + name;
    return list;
}

std::string versionLine(const std::string &build)
{
    return std::string("nanscope ") + nanscopeVersion() + " (LibTorch " + libtorchVersion() + ", " + build + ")\n";
}

int runSubcommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    try {
        if (args.empty() || !isSubcommand(args[0]))
            throw std::invalid_argument("expected a sub-command: " + subcommandList(", "));
        if (args[0] == "scenarios")
            return listScenarios(args, out);
        if (args[0] == "inspect")
            return inspectCommand(args, out, err);
        if (args[0] == "run")
            return runCommand(args, out, err);
        if (args[0] == "report")
            return reportCommand(args, out, err);
        if (args[0] == "export")
            return exportCommand(args, out, err);
        if (args[0] == "replay")
            return replayCommand(args, out, err);
        if (args[0] == "diff")
            return diffCommand(args, out, err);
        if (args[0] == "steer")
            return steerCommand(args, out, err);
        return benchCommand(args, out, err);
    } catch (const RunFileError &e) {  // a run file that cannot be read: its name and the cause
        err << "nanscope: " << e.what() << '\n';
        return 1;
    } catch (const HelpRequested &) {
        out << usage(args[0]);
        return 0;
    } catch (const std::exception &e) {
        err << "nanscope: " << e.what() << '\n';
        return 2;
    }
}

}  // namespace nanscope::cli
