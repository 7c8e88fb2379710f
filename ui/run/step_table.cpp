#include "run/step_table.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

namespace nanscope {

StepTable::StepTable() { file_ = std::tmpfile(); }

StepTable::~StepTable()
{
    if (file_)
        std::fclose(file_);
}

void StepTable::clear()
{
    if (file_)
        std::fclose(file_);
    file_ = std::tmpfile();
    rows_ = 0;
    failed_ = false;
}

void StepTable::append(const StepRecord &r)
{
    Row row{};
    row.step = r.step;
    row.loss = r.loss;
    row.gradNorm = r.gradNorm;
    row.gradNormClipped = r.gradNormClipped;
    row.learningRate = r.learningRate;
    row.lossScale = r.lossScale;
    row.stepMillis = r.stepMillis;
    for (const LayerHealth &h : r.layers)
        row.nonFiniteLayers += h.nonFinite() ? 1 : 0;
    row.skipped = r.skipped;
    row.rolledBack = r.rolledBack;
    row.nonFinite = r.nonFinite();
    row.phase = static_cast<unsigned char>(r.origin.phase);
    if (!file_ || std::fwrite(&row, sizeof row, 1, file_) != 1) {
        failed_ = true;
        return;
    }
    ++rows_;
}

namespace {

void putNumber(std::FILE *out, double v)
{
    if (std::isnan(v))
        std::fputs("nan", out);
    else if (std::isinf(v))
        std::fputs(v > 0 ? "inf" : "-inf", out);
    else
        std::fprintf(out, "%.9g", v);
}

}  // namespace

bool StepTable::writeCsv(const std::string &path, std::string *error) const
{
    auto fail = [&](const std::string &why) {
        if (error)
            *error = why;
        return false;
    };
    if (!file_ || failed_)
        return fail("the step data could not be kept in a temporary file (is the disk full?)");
    std::FILE *out = std::fopen(path.c_str(), "w");
    if (!out)
        return fail("cannot write " + path + ": " + std::strerror(errno));
    std::fputs("step,loss,grad_norm,grad_norm_clipped,lr,loss_scale,skipped,rolled_back,nonfinite,"
               "origin_phase,nonfinite_layers,step_ms\n",
               out);
    std::fflush(file_);
    std::rewind(file_);
    std::vector<Row> chunk(4096);
    std::size_t got;
    while ((got = std::fread(chunk.data(), sizeof(Row), chunk.size(), file_)) > 0) {
        for (std::size_t i = 0; i < got; ++i) {
            const Row &r = chunk[i];
            std::fprintf(out, "%d,", r.step);
            for (double v : {r.loss, r.gradNorm, r.gradNormClipped, r.learningRate, r.lossScale}) {
                putNumber(out, v);
                std::fputc(',', out);
            }
            std::fprintf(out, "%d,%d,%d,%s,%d,%.4f\n", r.skipped, r.rolledBack, r.nonFinite,
                         r.nonFinite ? phaseName(Phase(r.phase)) : "", r.nonFiniteLayers, r.stepMillis);
        }
    }
    // Appends continue at the end of the file.
    std::fseek(file_, 0, SEEK_END);
    const bool ok = std::fclose(out) == 0;
    return ok ? true : fail("cannot finish writing " + path + ": " + std::strerror(errno));
}

}  // namespace nanscope
