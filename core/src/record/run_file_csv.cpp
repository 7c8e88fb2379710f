// A run file as CSV: what `nanscope export` and the window's File › Export step data write.
#include "nanscope/run_file.h"

#include "nanscope/health_kinds.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

namespace nanscope {

namespace {

// Non-finite numbers as NaN, inf and -inf, which pandas and spreadsheets read; every finite
// double with the digits that give it back exactly.
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
        for (const HealthKindInfo &kind : kHealthKinds) {
            const TensorHealth &h = lh.*kind.member;
            if (!h.present)
                continue;
            o << r.step << ',' << i << ',' << csvText(layers[i].path) << ',' << kind.id << ',' << h.numel << ',' << h.nan
              << ',' << h.posInf << ',' << h.negInf << ',' << csvNumber(h.min) << ',' << csvNumber(h.max) << ','
              << csvNumber(h.absMax) << ',' << csvNumber(h.finiteL2) << '\n';
        }
    }
}

}  // namespace

std::int64_t writeRunCsv(const RunFile &file, std::ostream &out, bool layers)
{
    if (layers)
        out << "step,layer,path,kind,numel,nan,posinf,neginf,min,max,absmax,norm\n";
    else
        out << "step,loss,grad_norm,grad_norm_clipped,lr,loss_scale,skipped,rolled_back,why,step_ms,nonfinite,"
               "origin_phase,origin_layer,origin_op,bad_samples,quarantined\n";
    constexpr int kChunk = 2048;
    int last = -1;
    std::int64_t rows = 0;
    for (;;) {
        const std::vector<StepRecordPtr> steps = file.readSteps(last, kChunk, layers);
        for (const StepRecordPtr &r : steps) {
            if (layers)
                writeLayerRows(out, *r, file.layers());
            else
                writeStepRow(out, *r, file.layers());
            last = r->step;
            ++rows;
        }
        if (int(steps.size()) < kChunk)
            return rows;
    }
}

}  // namespace nanscope
