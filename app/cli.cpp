#include "cli.h"

#include "cli_model.h"
#include "json_writer.h"
#include "run_printer.h"
#include "nanscope/bench.h"
#include "nanscope/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <mutex>
#include <ostream>
#include <stdexcept>

namespace nanscope::cli {

namespace {

double parseNumber(const std::string &flag, const std::string &v)
{
    char *end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(d))
        throw std::invalid_argument(flag + " expects a finite number, got '" + v + "'");
    return d;
}

int parseInt(const std::string &flag, const std::string &v, int min)
{
    char *end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < min || n > 100000000)
        throw std::invalid_argument(flag + " expects an integer >= " + std::to_string(min) + ", got '" + v + "'");
    return int(n);
}

int listScenarios(std::ostream &out)
{
    for (const ScenarioInfo &s : scenarios())
        out << std::left << std::setw(16) << s.id << std::right << ' ' << s.title << '\n';
    return 0;
}

int runCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    const RunOptions opts = parseRunOptions(args);
    Session session;
    const bool pause = opts.config.controls && opts.config.controls->pauseOnNonFinite;
    RunPrinter printer(out, opts.json, session, pause);
    session.addObserver(&printer);
    std::string error;
    if (!session.start(opts.config, &error)) {
        err << "nanscope: " << error << '\n';
        return 2;
    }
    session.wait();
    session.removeObserver(&printer);
    const RunSummary s = printer.summary();
    if (!s.error.empty()) {
        err << "nanscope: " << s.error << '\n';
        return 1;
    }
    return 0;
}

int benchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    bool json = false;
    int rounds = 100;
    std::vector<std::string> models;
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--json")
            json = true;
        else if (args[i] == "--rounds" && i + 1 < args.size())
            rounds = parseInt("--rounds", args[++i], 1);
        else if (args[i] == "--only" && i + 1 < args.size())
            models.push_back(args[++i]);
        else
            throw std::invalid_argument("bench: unknown argument '" + args[i] + "'");
    }
    const auto results = runBenchmarks(
        rounds,
        [&](const std::string &m) {
            if (!json)
                err << m << "...\n";
        },
        "cpu", Precision::FP32, models);
    if (!json)
        out << "median step time over " << rounds << " interleaved rounds (batch 32, 1 thread)\n"
            << "model   probe off   full map   op-level   map ratio   op ratio\n";
    for (const BenchResult &b : results) {
        if (json) {
            JsonObject j;
            j.add("type", "bench").add("model", b.model).add("batch", b.batch).add("rounds", b.rounds)
                .add("probe_off_ms", b.probeOffMs).add("full_map_ms", b.fullMapMs).add("op_level_ms", b.opLevelMs)
                .add("full_map_ratio", b.fullMapRatio()).add("op_level_ratio", b.opLevelRatio());
            out << j.str() << '\n';
        } else {
            out << std::left << std::setw(6) << b.model << std::right << std::fixed << std::setprecision(3)
                << std::setw(9) << b.probeOffMs << "ms" << std::setw(9) << b.fullMapMs << "ms" << std::setw(9)
                << b.opLevelMs << "ms" << std::setw(11) << b.fullMapRatio() << 'x' << std::setw(10)
                << b.opLevelRatio() << "x\n";
        }
    }
    return 0;
}

}  // namespace

RunOptions parseRunOptions(const std::vector<std::string> &args)
{
    RunOptions o;
    std::optional<double> lr, clip, lossScale;
    std::optional<Precision> precision;
    bool clipOff = false, pause = false, lossScaleOff = false;
    std::optional<RecoveryPolicy> recovery;
    bool haveScenario = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        auto value = [&]() -> const std::string & {
            if (i + 1 >= args.size())
                throw std::invalid_argument(a + " needs a value");
            return args[++i];
        };
        if (a == "--scenario") {
            o.config.scenario = value();
            haveScenario = true;
        } else if (a == "--steps") {
            o.config.steps = parseInt(a, value(), 1);
        } else if (a == "--seed") {
            o.config.seed = std::uint64_t(parseInt(a, value(), 0));
        } else if (a == "--device") {
            o.config.device = value();
            if (o.config.device != "cpu" && o.config.device != "cuda")
                throw std::invalid_argument("--device is cpu or cuda, got '" + o.config.device + "'");
        } else if (a == "--lr") {
            lr = parseNumber(a, value());
            if (*lr <= 0)
                throw std::invalid_argument("--lr must be positive");
        } else if (a == "--clip") {
            const std::string &v = value();
            if (v == "off") {
                clipOff = true;
            } else {
                clip = parseNumber(a, v);
                if (*clip <= 0)
                    throw std::invalid_argument("--clip must be positive or 'off'");
            }
        } else if (a == "--recovery") {
            const std::string &v = value();
            if (v == "none")
                recovery = RecoveryPolicy::none();
            else if (v == "skip")
                recovery = RecoveryPolicy::skipOnly();
            else if (v == "full")
                recovery = RecoveryPolicy::full();
            else
                throw std::invalid_argument("--recovery is none, skip or full, got '" + v + "'");
        } else if (a == "--precision") {
            const std::string &v = value();
            if (v == "fp32")
                precision = Precision::FP32;
            else if (v == "fp16")
                precision = Precision::FP16;
            else if (v == "bf16")
                precision = Precision::BF16;
            else
                throw std::invalid_argument("--precision is fp32, fp16 or bf16, got '" + v + "'");
        } else if (a == "--loss-scale") {
            const std::string &v = value();
            if (v == "off") {
                lossScaleOff = true;
            } else {
                lossScale = parseNumber(a, v);
                if (*lossScale <= 0)
                    throw std::invalid_argument("--loss-scale must be positive or 'off'");
            }
        } else if (a == "--pause-on-nonfinite") {
            pause = true;
        } else if (a == "--batch") {
            o.config.batchSize = parseInt(a, value(), 1);
        } else if (a == "--bn-eps") {
            o.config.bnEps = parseNumber(a, value());
        } else if (a == "--json") {
            o.json = true;
        } else if (parseModelFlag(a, value, o.config)) {
        } else {
            throw std::invalid_argument("run: unknown argument '" + a + "'");
        }
    }
    const bool model = !o.config.modelPath.empty();
    if (haveScenario == model)
        throw std::invalid_argument("run needs --scenario ID (see `nanscope scenarios`) or --model FILE.pt, not both");
    if (!model && !o.config.savePath.empty())
        throw std::invalid_argument("--save writes a TorchScript model: it needs --model FILE.pt");
    const ScenarioInfo *info = model ? nullptr : findScenario(o.config.scenario);
    if (!model && !info)
        throw std::invalid_argument("unknown scenario '" + o.config.scenario + "' (see `nanscope scenarios`)");
    Controls c = info ? info->defaults : Controls{};
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
               "                    [--batch N] [--bn-eps X] [--precision fp32|fp16|bf16]\n"
               "                    [--loss-scale X|off] [--json]\n"
               "       nanscope run --model FILE.pt (--input-shape 8x3x64x64 | --inputs X.pt [--targets Y.pt])\n"
               "                    [--loss cross-entropy|mse] [--save OUT.pt] [any option above]\n"
               "  trains, prints progress and a report: the first non-finite step and its origin\n"
               "  (phase, layer, op); --json: one JSON object per step, event and summary\n";
    if (command == "inspect")
        return "usage: nanscope inspect FILE.pt (--input-shape 8x3x64x64 | --inputs X.pt [--targets Y.pt])\n"
               "                        [--loss cross-entropy|mse] [--seed S] [--device cpu|cuda] [--json]\n"
               "  one forward and backward pass: each module's health and the first producer of a\n"
               "  non-finite value\n";
    return "usage: nanscope bench [--rounds N] [--only mlp|cnn|deep] [--json]\n"
           "       nanscope bench --model FILE.pt --input-shape 8x3x64x64 [--rounds N] [--json]\n"
           "  median step time with the probe off, with the full map and with op-level checks,\n"
           "  interleaved in one run, and their ratios\n";
}

bool asksForHelp(const std::vector<std::string> &args)
{
    return std::find(args.begin(), args.end(), "--help") != args.end() ||
           std::find(args.begin(), args.end(), "-h") != args.end();
}

}  // namespace

bool isSubcommand(const std::string &arg)
{
    return arg == "scenarios" || arg == "run" || arg == "bench" || arg == "inspect";
}

int runSubcommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    try {
        if (args.empty() || !isSubcommand(args[0]))
            throw std::invalid_argument("expected a sub-command: scenarios, run, inspect or bench");
        if (asksForHelp(args)) {
            out << usage(args[0]);
            return 0;
        }
        if (args[0] == "scenarios")
            return listScenarios(out);
        if (args[0] == "inspect")
            return inspectCommand(args, out, err);
        if (std::find(args.begin(), args.end(), "--model") != args.end() && args[0] == "bench")
            return benchModelCommand(args, out, err);
        if (args[0] == "run")
            return runCommand(args, out, err);
        return benchCommand(args, out, err);
    } catch (const std::exception &e) {
        err << "nanscope: " << e.what() << '\n';
        return 2;
    }
}

}  // namespace nanscope::cli
