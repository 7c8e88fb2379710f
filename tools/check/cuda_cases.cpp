// The CUDA test cases, Qt-free so that tools/device-check.sh runs them where only a pip torch is
// installed: real autocast computes in half and bfloat16, and fp16-overflow on a GPU skips and
// backs off as the scaler's rules say. Each case prints PASS or FAIL with the values it compared.
// Exit 1 on any failure; 77 (CTest's "skipped") where LibTorch sees no CUDA device.
#include "model_api/autocast_scope.h"
#include "run_collector.h"

#include "nanscope/devices.h"
#include "nanscope/scenario.h"

#include <torch/torch.h>

#include <cstdio>
#include <sstream>
#include <string>

using namespace nanscope;

namespace {

int failures = 0;

// One comparison: PASS or FAIL with what was expected and what came.
template <typename T> void expect(const char *what, const T &got, const T &expected)
{
    std::ostringstream line;
    line << (got == expected ? "PASS  " : "FAIL  ") << what << ": " << got;
    if (!(got == expected))
        line << " (expected " << expected << ")";
    std::puts(line.str().c_str());
    failures += got == expected ? 0 : 1;
}

void autocastComputesInTheReducedType()
{
    const at::Tensor a = torch::randn({4, 8}, torch::kCUDA), w = torch::randn({3, 8}, torch::kCUDA);
    std::string half, bf16;
    {
        AutocastScope scope(Precision::FP16, "cuda");
        expect("fp16 autocast is active", scope.active(), true);
        half = c10::toString(at::linear(a, w).scalar_type());
    }
    expect("linear under fp16 autocast", half, std::string("Half"));
    expect("linear after the scope", std::string(c10::toString(at::linear(a, w).scalar_type())),
           std::string("Float"));
    {
        AutocastScope scope(Precision::BF16, "cuda");
        bf16 = c10::toString(at::linear(a, w).scalar_type());
    }
    expect("linear under bf16 autocast", bf16, std::string("BFloat16"));
}

// Real autocast: the scaled gradient overflows fp16 at once, as in the CPU's emulation. How many
// steps the scaler needs, and when the head overflows, depend on the GPU's kernels.
void fp16OverflowBacksOff()
{
    RunConfig config;
    config.scenario = "fp16-overflow";
    config.device = "cuda";
    Controls c = findScenario(config.scenario)->defaults;
    c.precision = Precision::FP16;
    config.controls = c;
    const auto run = runToEnd(config);
    expect("fp16-overflow on cuda: error", run->summary.error, std::string());
    if (run->records.size() < 2) {
        expect("fp16-overflow on cuda: records", run->records.size() >= 2, true);
        return;
    }
    expect("precision label", run->summary.precision, std::string("fp16"));
    expect("step 0: loss scale", run->records[0]->lossScale, 65536.0);
    expect("step 0: skipped", run->records[0]->skipped, true);
    expect("step 1: loss scale", run->records[1]->lossScale, 32768.0);
    expect("at least 10 steps skipped by the scaler", run->summary.scalerSkippedSteps >= 10, true);
    std::string overflowed;
    for (const auto &r : run->records)
        for (std::size_t i = 1; i < r->layers.size() && overflowed.empty(); ++i)
            if (r->layers[i].forward.hasNonFinite())
                overflowed = run->layers[i].path;
    expect("the first forward overflow is head's (or none)", overflowed.empty() || overflowed == "head", true);
}

}  // namespace

int main()
{
    bool cuda = false;
    for (const DeviceInfo &d : devices())
        cuda = cuda || (d.id == "cuda" && d.available);
    if (!cuda) {
        std::puts("skipped: LibTorch sees no CUDA device here");
        return 77;
    }
    autocastComputesInTheReducedType();
    fp16OverflowBacksOff();
    std::printf("%d failed\n", failures);
    return failures == 0 ? 0 : 1;
}
