#include "cli_model.h"

#include "json_writer.h"
#include "nanscope/bench.h"
#include "nanscope/inspect.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace nanscope::cli {

namespace {

JsonObject healthJson(const TensorHealth &h)
{
    JsonObject j;
    j.add("numel", h.numel).add("nan", h.nan).add("posinf", h.posInf).add("neginf", h.negInf).add("min", h.min).add(
        "max", h.max);
    return j;
}

void addHealth(JsonObject &j, const std::string &key, const TensorHealth &h)
{
    if (h.present)
        j.add(key, healthJson(h));
    else
        j.addNull(key);
}

std::string healthText(const TensorHealth &h)
{
    if (!h.present)
        return "-";
    std::ostringstream s;
    if (h.hasNonFinite())
        s << h.nan << " NaN " << h.posInf << " +Inf " << h.negInf << " -Inf";
    else
        s << std::setprecision(3) << "[" << h.min << ", " << h.max << "]";
    return s.str();
}

void printText(const InspectReport &r, const RunConfig &config, std::ostream &out)
{
    out << "model " << config.modelPath << ": " << r.layers.size() << " modules, loaded in " << std::fixed
        << std::setprecision(1) << r.loadMillis << " ms, instrumented in " << r.instrumentMillis << " ms\n"
        << std::defaultfloat;
    for (const NonFiniteState &s : r.nonFiniteState)
        out << "  ! " << describeNonFiniteState(s) << '\n';
    // Columns as wide as their longest entry: deep paths and types like AdaptiveAvgPool2d.
    std::size_t pathWidth = 8, typeWidth = 6;
    for (const Layer &l : r.layers) {
        pathWidth = std::max(pathWidth, l.path.size() + 2);
        typeWidth = std::max(typeWidth, l.type.size() + 2);
    }
    out << "loss " << r.record.loss << "\n\n"
        << std::left << std::setw(int(pathWidth)) << "module" << std::setw(int(typeWidth)) << "type" << std::setw(30)
        << "forward" << std::setw(30) << "gradient" << "parameters\n";
    for (const Layer &l : r.layers) {
        const LayerHealth &h = r.record.layers[l.id];
        out << std::setw(int(pathWidth)) << (l.path.empty() ? std::string("(root)") : l.path)
            << std::setw(int(typeWidth)) << l.type
            << std::setw(30) << healthText(h.forward) << std::setw(30) << healthText(h.grad) << healthText(h.params)
            << '\n';
    }
    out << std::right << '\n';
    const Origin &o = r.record.origin;
    if (!o.valid()) {
        out << "no non-finite value in the forward or backward pass\n";
        return;
    }
    out << "first non-finite: phase " << phaseName(o.phase) << ", module '" << o.layerPath << "', op "
        << (o.op.empty() ? std::string("(not named)") : o.op) << (o.produced ? ", produced there" : ", passed on")
        << '\n'
        << "  " << o.explanation << '\n';
    if (!o.source.empty())
        out << "  source: " << o.source << '\n';
}

void printJson(const InspectReport &r, std::ostream &out)
{
    std::string layers;
    for (const Layer &l : r.layers) {
        const LayerHealth &h = r.record.layers[l.id];
        JsonObject j;
        j.add("path", l.path).add("type", l.type);
        addHealth(j, "forward", h.forward);
        addHealth(j, "grad", h.grad);
        addHealth(j, "params", h.params);
        addHealth(j, "param_grads", h.paramGrads);
        layers += (layers.empty() ? "" : ",") + j.str();
    }
    std::string state;
    for (const NonFiniteState &s : r.nonFiniteState) {
        JsonObject j;
        j.add("name", s.name).add("kind", s.buffer ? "buffer" : "parameter").add("numel", s.health.numel)
            .add("nan", s.health.nan).add("posinf", s.health.posInf).add("neginf", s.health.negInf);
        state += (state.empty() ? "" : ",") + j.str();
    }
    JsonObject top;
    top.add("type", "inspect").add("loss", r.record.loss).addRaw("layers", "[" + layers + "]");
    const Origin &o = r.record.origin;
    if (o.valid()) {
        JsonObject j;
        j.add("phase", phaseName(o.phase)).add("layer", o.layerPath);
        if (o.op.empty())
            j.addNull("op");
        else
            j.add("op", o.op);
        if (o.source.empty())
            j.addNull("source");
        else
            j.add("source", o.source);
        j.add("produced", o.produced).add("explanation", o.explanation);
        top.add("origin", j);
    } else {
        top.addNull("origin");
    }
    top.addRaw("nonfinite_state", "[" + state + "]").add("load_ms", r.loadMillis).add("instrument_ms", r.instrumentMillis);
    out << top.str() << '\n';
}

}  // namespace

std::vector<std::int64_t> parseShape(const std::string &text)
{
    std::vector<std::int64_t> dims;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, 'x')) {
        char *end = nullptr;
        const long long d = std::strtoll(part.c_str(), &end, 10);
        if (part.empty() || *end != '\0' || d <= 0 || d > (1LL << 31))
            throw std::invalid_argument("--input-shape expects positive sizes like 8x3x64x64, got '" + text + "'");
        dims.push_back(d);
    }
    if (dims.empty() || text.back() == 'x')
        throw std::invalid_argument("--input-shape expects positive sizes like 8x3x64x64, got '" + text + "'");
    return dims;
}

bool parseModelFlag(const std::string &flag, const std::function<const std::string &()> &value, RunConfig &config)
{
    if (flag == "--model")
        config.modelPath = value();
    else if (flag == "--input-shape")
        config.inputShape = parseShape(value());
    else if (flag == "--inputs")
        config.inputsPath = value();
    else if (flag == "--targets")
        config.targetsPath = value();
    else if (flag == "--loss") {
        config.loss = value();
        if (!isKnownLoss(config.loss))
            throw std::invalid_argument("--loss is cross-entropy or mse, got '" + config.loss + "'");
    } else if (flag == "--save")
        config.savePath = value();
    else
        return false;
    return true;
}

int inspectCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    RunConfig config;
    bool json = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        const auto value = [&]() -> const std::string & {
            if (i + 1 >= args.size())
                throw std::invalid_argument(a + " needs a value");
            return args[++i];
        };
        if (a == "--json")
            json = true;
        else if (a == "--seed")
            config.seed = std::stoull(value());
        else if (a == "--device")
            config.device = value();
        else if (a == "--save")
            throw std::invalid_argument("inspect changes nothing, so it saves nothing (see run --save)");
        else if (!parseModelFlag(a, value, config)) {
            if (!a.empty() && a[0] != '-' && config.modelPath.empty())
                config.modelPath = a;
            else
                throw std::invalid_argument("inspect: unknown argument '" + a + "'");
        }
    }
    if (config.modelPath.empty())
        throw std::invalid_argument("inspect needs a TorchScript file: nanscope inspect FILE.pt --input-shape 8x3x64x64");
    InspectReport report;
    try {
        report = inspectModel(config);
    } catch (const std::exception &e) {
        std::string m = e.what();
        err << "nanscope: " << m.substr(0, m.find('\n')) << '\n';
        return 1;
    }
    if (json)
        printJson(report, out);
    else
        printText(report, config, out);
    return 0;
}

int benchModelCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    RunConfig config;
    bool json = false;
    int rounds = 10;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        const auto value = [&]() -> const std::string & {
            if (i + 1 >= args.size())
                throw std::invalid_argument(a + " needs a value");
            return args[++i];
        };
        if (a == "--json")
            json = true;
        else if (a == "--rounds")
            rounds = std::max(1, std::stoi(value()));
        else if (!parseModelFlag(a, value, config))
            throw std::invalid_argument("bench: unknown argument '" + a + "'");
    }
    BenchResult b;
    try {
        b = benchModel(config, rounds);
    } catch (const std::exception &e) {
        std::string m = e.what();
        err << "nanscope: " << m.substr(0, m.find('\n')) << '\n';
        return 1;
    }
    if (json) {
        JsonObject j;
        j.add("type", "bench").add("model", b.model).add("batch", b.batch).add("rounds", b.rounds)
            .add("load_ms", b.loadMs).add("instrument_ms", b.instrumentMs).add("probe_off_ms", b.probeOffMs)
            .add("full_map_ms", b.fullMapMs).add("op_level_ms", b.opLevelMs).add("full_map_ratio", b.fullMapRatio())
            .add("op_level_ratio", b.opLevelRatio());
        out << j.str() << '\n';
    } else {
        out << std::fixed << std::setprecision(2) << b.model << " (batch " << b.batch << ", " << b.rounds
            << " interleaved rounds, 1 thread)\n"
            << "load " << b.loadMs << " ms, instrument " << b.instrumentMs << " ms\n"
            << "median step: probe off " << b.probeOffMs << " ms, full map " << b.fullMapMs << " ms ("
            << std::setprecision(3) << b.fullMapRatio() << "x), op-level " << std::setprecision(2) << b.opLevelMs
            << " ms (" << std::setprecision(3) << b.opLevelRatio() << "x)\n";
    }
    return 0;
}

}  // namespace nanscope::cli
