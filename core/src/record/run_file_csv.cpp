// A run file as CSV: what `nanscope export` and the window's File › Export step data write.
#include "nanscope/run_file.h"

#include "nanscope/health_kinds.h"
#include "record/step_columns.h"

#include <ostream>

namespace nanscope {

namespace {

using record::csvNumber;
using record::csvText;

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
        out << record::stepCsvHeader() << '\n';
    constexpr int kChunk = 2048;
    int last = -1;
    std::int64_t rows = 0;
    for (;;) {
        const std::vector<StepRecordPtr> steps = file.readSteps(last, kChunk, layers);
        for (const StepRecordPtr &r : steps) {
            if (layers)
                writeLayerRows(out, *r, file.layers());
            else
                out << record::stepCsvRow(*r, file.layers()) << '\n';
            last = r->step;
            ++rows;
        }
        if (int(steps.size()) < kChunk)
            return rows;
    }
}

}  // namespace nanscope
