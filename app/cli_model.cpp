#include "cli_model.h"

#include "cli_args.h"
#include "cli_json.h"
#include "nanscope/health_kinds.h"
#include "nanscope/input_shape.h"
#include "nanscope/inspect.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

namespace nanscope::cli {

namespace {

// null where nothing was observed (a module without parameters has no parameter health).
Json healthJson(const TensorHealth &h)
{
    if (!h.present)
        return nullptr;
    return Json{{"numel", h.numel},         {"nan", h.nan},
                {"posinf", h.posInf},       {"neginf", h.negInf},
                {"min", jsonNumber(h.min)}, {"max", jsonNumber(h.max)}};
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
        << "forward" << std::setw(30) << "gradient"
        << "parameters\n";
    for (const Layer &l : r.layers) {
        const LayerHealth &h = r.record.layers[l.id];
        out << std::setw(int(pathWidth)) << (l.path.empty() ? std::string("(root)") : l.path)
            << std::setw(int(typeWidth)) << l.type << std::setw(30) << healthText(h.forward) << std::setw(30)
            << healthText(h.grad) << healthText(h.params) << '\n';
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
    Json layers = Json::array();
    for (const Layer &l : r.layers) {
        const LayerHealth &h = r.record.layers[l.id];
        Json layer{{"path", l.path}, {"type", l.type}};
        for (const HealthKindInfo &kind : kHealthKinds)
            layer[kind.id] = healthJson(h.*kind.member);
        layers.push_back(std::move(layer));
    }
    Json state = Json::array();
    for (const NonFiniteState &s : r.nonFiniteState)
        state.push_back(Json{{"name", s.name},
                             {"kind", s.buffer ? "buffer" : "parameter"},
                             {"numel", s.health.numel},
                             {"nan", s.health.nan},
                             {"posinf", s.health.posInf},
                             {"neginf", s.health.negInf}});
    const Origin &o = r.record.origin;
    const Json origin = o.valid() ? originJson(o) : Json();  // null: everything was finite
    out << jsonLine(Json{{"type", "inspect"},
                         {"loss", jsonNumber(r.record.loss)},
                         {"layers", layers},
                         {"origin", origin},
                         {"nonfinite_state", state},
                         {"load_ms", jsonNumber(r.loadMillis)},
                         {"instrument_ms", jsonNumber(r.instrumentMillis)}})
        << '\n';
}

}  // namespace

void addModelOptions(Arguments &args, RunConfig &config)
{
    args.option("--model", [&config](const auto &, const auto &v) { config.modelPath = v; })
        .repeatable("--input-shape",
                    [&config](const auto &flag, const auto &v) {
                        // One per input of forward, in its order: "8x32:int64", "8x32:bool".
                        const auto parsed = parseShapedInput(v);
                        if (!parsed)
                            throw std::invalid_argument(flag +
                                                        " expects positive sizes like 8x3x64x64, optionally with a "
                                                        "dtype (8x32:int64, 8x32:bool), got '" +
                                                        v + "'");
                        const auto &shape = parsed->shape;
                        const std::string &dtype = parsed->dtype;
                        if (config.inputShape.empty()) {
                            if (dtype == "bool")
                                throw std::invalid_argument(flag + ": the first input is the data, float32 or int64");
                            config.inputShape = shape;
                            config.tokenIds = config.tokenIds || dtype == "int64";
                            return;
                        }
                        SideInput side;
                        side.shape = shape;
                        side.dtype = dtype;
                        config.sideInputs.push_back(side);
                    })
        .option("--input-dtype",
                [&config](const auto &flag, const auto &v) {
                    if (v != "float32" && v != "int64")
                        throw std::invalid_argument(flag + " is float32 or int64 (token ids), got '" + v + "'");
                    config.tokenIds = v == "int64";
                })
        .option("--vocab",
                [&config](const auto &flag, const auto &v) {
                    config.vocab = parseInt(flag, v, 1);
                    config.tokenIds = true;
                })
        .repeatable("--inputs",
                    [&config](const auto &, const auto &v) {
                        // One file per input of forward, in its order, or one holding them all.
                        if (config.inputsPath.empty()) {
                            config.inputsPath = v;
                            return;
                        }
                        for (SideInput &side : config.sideInputs)
                            if (side.path.empty()) {
                                side.path = v;
                                return;
                            }
                        SideInput side;
                        side.path = v;
                        config.sideInputs.push_back(side);
                    })
        .option("--targets", [&config](const auto &, const auto &v) { config.targetsPath = v; })
        .option("--output", [&config](const auto &, const auto &v) { config.output = v; })
        .option("--loss", [&config](const auto &flag, const auto &v) {
            if (!isKnownLoss(v))
                throw std::invalid_argument(
                    flag + " is cross-entropy, mse or model (the model returns its loss), got '" + v + "'");
            config.loss = v;
        });
}

std::string missingModelInput(const RunConfig &config)
{
    if (!config.usesModelFile() || !config.inputShape.empty() || !config.inputsPath.empty())
        return {};
    std::string message = "a model needs --input-shape (such as 8x3x64x64) or --inputs X.pt";
    try {
        const InputGuess guess = guessInputShape(config.modelPath);
        if (!guess.shape.empty())
            message += "; try --input-shape " + formatInputShape(guess.shape) +
                       (guess.tokenIds ? " --input-dtype int64" : "") + " (" + guess.note + ")";
    } catch (const std::exception &) {
        return {};  // a file that does not load: the run says why, in its own words
    }
    return message;
}

int inspectCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    RunConfig config;
    bool json = false;
    Arguments arguments("inspect");
    addModelOptions(arguments, config);
    arguments
        .option("--seed",
                [&config](const auto &flag, const auto &v) { config.seed = std::uint64_t(parseInt(flag, v, 0)); })
        .option("--device", [&config](const auto &flag, const auto &v) { config.device = parseDevice(flag, v); })
        .option("--save",
                [](const auto &, const auto &) {
                    throw std::invalid_argument("inspect changes nothing, so it saves nothing (see run --save)");
                })
        .flag("--json", json)
        .positional("FILE.pt", [&config](const auto &, const auto &v) {
            if (!config.modelPath.empty())  // --model named it already
                throw std::invalid_argument("inspect: unknown argument '" + v + "'");
            config.modelPath = v;
        });
    arguments.parse(args);
    if (config.modelPath.empty())
        throw std::invalid_argument(
            "inspect needs a TorchScript file: nanscope inspect FILE.pt --input-shape 8x3x64x64");
    if (const std::string missing = missingModelInput(config); !missing.empty()) {
        err << "nanscope: " << missing << '\n';
        return 1;
    }
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

}  // namespace nanscope::cli
