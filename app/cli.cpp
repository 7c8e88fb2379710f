#include "cli.h"

#include "cli_model.h"
#include "json_writer.h"
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

std::vector<std::string> nonFiniteLayers(const StepRecord &r, const std::vector<Layer> &layers)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < r.layers.size() && i < layers.size(); ++i) {
        const LayerHealth &l = r.layers[i];
        if (layers[i].parent < 0)
            continue;  // the root's output is its last layer's
        if (l.forward.hasNonFinite() || l.grad.hasNonFinite() || l.params.hasNonFinite() || l.paramGrads.hasNonFinite())
            out.push_back(layers[i].path);
    }
    return out;
}

JsonObject originJson(const Origin &o)
{
    JsonObject j;
    j.add("step", o.step).add("phase", phaseName(o.phase)).add("layer", o.layerPath);
    if (o.op.empty())
        j.addNull("op");
    else
        j.add("op", o.op);
    j.add("produced", o.produced).add("explanation", o.explanation);
    return j;
}

std::string fmt(double v)
{
    std::ostringstream s;
    s << std::setprecision(5) << v;
    return s.str();
}

// Prints a run as it goes: readable lines, or one JSON object per line.
class RunPrinter final : public SessionObserver {
public:
    RunPrinter(std::ostream &out, bool json, Session &session, bool stopAtPause)
        : out_(out), json_(json), session_(session), stopAtPause_(stopAtPause) {}

    void runStarted(int, const std::vector<Layer> &layers, const RunConfig &config) override
    {
        std::lock_guard<std::mutex> lock(mutex_);
        layers_ = layers;
        const ScenarioInfo *info = config.modelPath.empty() ? findScenario(config.scenario) : nullptr;
        const int steps = config.steps > 0 ? config.steps : (info ? info->defaultSteps : 100);
        every_ = std::max(1, steps / 20);
        if (!json_)
            out_ << (info ? "scenario " + config.scenario : "model " + config.modelPath) << ", " << layers.size() << " layers, " << steps
                 << " steps, seed " << config.seed << ", device " << config.device << '\n';
    }

    void stepRecorded(const StepRecordPtr &r) override
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::vector<std::string> bad = nonFiniteLayers(*r, layers_);
        if (json_) {
            JsonObject j;
            j.add("type", "step").add("step", r->step).add("loss", r->loss).add("grad_norm", r->gradNorm)
                .add("grad_norm_clipped", r->gradNormClipped).add("lr", r->learningRate)
                .add("nonfinite_layers", bad).add("skipped", r->skipped).add("rolled_back", r->rolledBack);
            if (!r->quarantined.empty())
                j.add("quarantined", r->quarantined);
            out_ << j.str() << '\n';
            return;
        }
        const bool firstBad = r->nonFinite() && !sawNonFinite_;
        sawNonFinite_ = sawNonFinite_ || r->nonFinite();
        if (r->step % every_ != 0 && !firstBad && !r->rolledBack && r->quarantined.empty())
            return;
        out_ << "step " << std::setw(5) << r->step << "  loss " << std::setw(12) << fmt(r->loss) << "  grad "
             << std::setw(12) << fmt(r->gradNorm) << "  lr " << fmt(r->learningRate);
        if (!bad.empty())
            out_ << "  non-finite in " << bad.size() << " layers";
        if (!r->why.empty())
            out_ << "  (" << r->why << ")";
        out_ << '\n';
    }

    void eventRaised(const Event &e) override
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (e.kind == EventKind::Paused && stopAtPause_)
            session_.stop();  // headless: nobody to decide, so stop here with clean weights
        if (json_) {
            JsonObject j;
            j.add("type", "event").add("step", e.step).add("text", e.text);
            out_ << j.str() << '\n';
        } else if (e.kind != EventKind::Info) {
            out_ << "  * " << (e.step >= 0 ? "step " + std::to_string(e.step) + ": " : std::string()) << e.text << '\n';
        }
    }

    void runFinished(const RunSummary &s) override
    {
        std::lock_guard<std::mutex> lock(mutex_);
        summary_ = s;
        if (json_) {
            JsonObject j;
            j.add("type", "summary").add("scenario", s.scenario).add("steps_run", s.stepsRun);
            if (s.firstNonFiniteStep < 0)
                j.addNull("first_nonfinite_step").addNull("origin");
            else
                j.add("first_nonfinite_step", s.firstNonFiniteStep).add("origin", originJson(s.origin));
            j.add("nonfinite_steps", s.nonFiniteSteps).add("quarantined_samples", s.quarantinedSamples)
                .add("rollbacks", s.rollbacks).add("skipped_steps", s.skippedSteps)
                .add("final_lr", s.finalLearningRate).add("steps_per_s", s.stepsPerSecond)
                .add("stopped_by_policy", s.stoppedByPolicy).add("final_state_finite", s.finalStateFinite);
            JsonObject perLayer;
            for (std::size_t i = 0; i < s.nonFiniteStepsPerLayer.size() && i < layers_.size(); ++i)
                if (layers_[i].parent >= 0 && s.nonFiniteStepsPerLayer[i] > 0)
                    perLayer.add(layers_[i].path, s.nonFiniteStepsPerLayer[i]);
            j.add("nonfinite_steps_per_layer", perLayer);
            if (!s.error.empty())
                j.add("error", s.error);
            out_ << j.str() << '\n';
            return;
        }
        if (!s.error.empty())
            return;  // main() prints the one-line error
        out_ << "\n== report ==\n" << "steps run: " << s.stepsRun << '\n';
        if (s.firstNonFiniteStep < 0) {
            out_ << "no non-finite value in any step\n";
        } else {
            out_ << "first non-finite step: " << s.firstNonFiniteStep << '\n'
                 << "origin: phase " << phaseName(s.origin.phase) << ", layer '" << s.origin.layerPath << "', op "
                 << (s.origin.op.empty() ? "(not named)" : s.origin.op) << ", "
                 << (s.origin.phase == Phase::Input ? "in the data"
                                                    : s.origin.produced ? "produced there" : "passed on")
                 << '\n'
                 << "  " << s.origin.explanation << '\n'
                 << "non-finite steps: " << s.nonFiniteSteps << '\n' << "per layer (steps with non-finite values):\n";
            for (std::size_t i = 0; i < s.nonFiniteStepsPerLayer.size() && i < layers_.size(); ++i)
                if (layers_[i].parent >= 0 && s.nonFiniteStepsPerLayer[i] > 0)
                    out_ << "  " << std::left << std::setw(12) << layers_[i].path << std::right << ' '
                         << s.nonFiniteStepsPerLayer[i] << '\n';
        }
        out_ << "recovery: " << s.quarantinedSamples.size() << " samples quarantined";
        for (std::int64_t i : s.quarantinedSamples)
            out_ << ' ' << i;
        out_ << ", " << s.rollbacks << " rollbacks, " << s.skippedSteps << " skipped steps"
             << (s.stoppedByPolicy ? ", stopped by the policy" : "") << '\n'
             << "final lr: " << fmt(s.finalLearningRate) << ", final state "
             << (s.finalStateFinite ? "finite" : "NON-FINITE") << '\n'
             << "speed: " << fmt(s.stepsPerSecond) << " steps/s\n";
    }

    RunSummary summary() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return summary_;
    }

private:
    mutable std::mutex mutex_;
    std::ostream &out_;
    bool json_;
    Session &session_;
    bool stopAtPause_;
    std::vector<Layer> layers_;
    int every_ = 1;
    bool sawNonFinite_ = false;
    RunSummary summary_;
};

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
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--json")
            json = true;
        else if (args[i] == "--rounds" && i + 1 < args.size())
            rounds = parseInt("--rounds", args[++i], 1);
        else
            throw std::invalid_argument("bench: unknown argument '" + args[i] + "'");
    }
    const auto results = runBenchmarks(rounds, [&](const std::string &m) {
        if (!json)
            err << m << "...\n";
    });
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
    std::optional<double> lr, clip;
    bool clipOff = false, pause = false;
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
    c.pauseOnNonFinite = pause;
    o.config.controls = c;
    return o;
}

bool isSubcommand(const std::string &arg)
{
    return arg == "scenarios" || arg == "run" || arg == "bench" || arg == "inspect";
}

int runSubcommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    try {
        if (args.empty() || !isSubcommand(args[0]))
            throw std::invalid_argument("expected a sub-command: scenarios, run, inspect or bench");
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
