// nanscope_check [cpu|cuda] [steps]: every scenario through the core, one line each, then the
// benchmark ratios. No Qt, so it builds wherever LibTorch does.
#include "nanscope/bench.h"
#include "nanscope/scenario.h"
#include "nanscope/session.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Collector : nanscope::SessionObserver {
    nanscope::RunSummary summary;
    void runFinished(const nanscope::RunSummary &s) override { summary = s; }
};

}  // namespace

int main(int argc, char **argv)
{
    const std::string device = argc > 1 ? argv[1] : "cpu";
    const int steps = argc > 2 ? std::atoi(argv[2]) : 0;
    int failures = 0;
    for (const nanscope::ScenarioInfo &info : nanscope::scenarios()) {
        nanscope::Session session;
        Collector c;
        session.addObserver(&c);
        nanscope::RunConfig config;
        config.scenario = info.id;
        config.device = device;
        config.steps = steps;
        std::string error;
        if (!session.start(config, &error) || !session.wait()) {
            std::printf("%-16s ERROR %s\n", info.id.c_str(), error.c_str());
            ++failures;
            continue;
        }
        const auto &s = c.summary;
        std::printf("%-16s steps=%d first_nonfinite=%d phase=%s layer='%s' op='%s' rollbacks=%d %s\n",
                    info.id.c_str(), s.stepsRun, s.firstNonFiniteStep, nanscope::phaseName(s.origin.phase),
                    s.origin.layerPath.c_str(), s.origin.op.c_str(), s.rollbacks, s.error.c_str());
        failures += s.error.empty() ? 0 : 1;
    }
    for (const auto &b : nanscope::runBenchmarks(30, nullptr))
        std::printf("bench %-5s off=%.3fms map=%.3fms (x%.3f) op=%.3fms (x%.3f)\n", b.model.c_str(), b.probeOffMs,
                    b.fullMapMs, b.fullMapRatio(), b.opLevelMs, b.opLevelRatio());
    return failures == 0 ? 0 : 1;
}
