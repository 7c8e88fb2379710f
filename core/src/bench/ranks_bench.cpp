// `bench --ranks N`: what the map and the arbitration cost a data-parallel step, against a plain
// data-parallel step (forward, backward, the gradient all-reduce, rank 0's buffers, the update),
// in interleaved rounds on every rank alike.
#include "nanscope/bench.h"

#include "bench/bench_models.h"
#include "bench/round_statistics.h"
#include "distributed/rank_step.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace nanscope {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

RanksBenchResult benchRanks(const DataParallel &job, const std::string &model, int rounds, int stepsPerRound,
                            const std::string &device)
{
    torch::set_num_threads(1);
    const bool cuda = device == "cuda";
    if (cuda && useRankGpu(job) < 0)
        throw std::runtime_error("bench --device cuda: LibTorch sees no CUDA device");
    RunConfig config;
    config.device = device;
    config.scenario = "bench-" + model;
    config.opLevelOrigin = false;
    config.snapshotEvery = 1 << 30;
    config.parallel = job;
    config.controls = Controls{};
    Trainer trainer(benchSetup(model), config);
    RankSync sync(job, config.device);
    sync.startFrom(trainer.model());
    trainer.setProbeMode(ProbeMode::FullMap);

    // Both kinds make the same collectives on every rank in the same order: a round is one kind's
    // steps on all ranks, then the other's; which goes first alternates from round to round.
    auto plain = [&] {
        trainer.plainStep([&] {
            sync.sumGradients(trainer.model(), job.world);
            sync.shareBuffers(trainer.model(), 0);
        });
    };
    auto checked = [&] {
        std::vector<Event> events;
        std::string stop;
        const std::shared_ptr<StepRecord> rec = trainer.computeStep();
        stepAcrossRanks(trainer, sync, *rec, job.onBadRank, events, stop);
    };
    RanksBenchResult r;
    r.model = model;
    r.world = job.world;
    r.collectives = sync.backendName();
    r.rounds = rounds;
    std::vector<double> plainMs, checkedMs;
    constexpr int kWarmup = 2;
    for (int round = 0; round < rounds + kWarmup; ++round)
        for (int k = 0; k < 2; ++k) {
            const bool isPlain = (round + k) % 2 == 0;
            const auto t0 = Clock::now();
            for (int s = 0; s < stepsPerRound; ++s)
                isPlain ? plain() : checked();
            if (cuda)
                torch::cuda::synchronize();  // NCCL's plain step reads nothing back on the host
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / stepsPerRound;
            if (round >= kWarmup)
                (isPlain ? plainMs : checkedMs).push_back(ms);
        }
    // Each round's own ratio, its two kinds measured back to back: how far apart they spread says
    // how much the median ratio can be trusted on this machine.
    std::vector<double> ratios;
    for (std::size_t i = 0; i < plainMs.size() && i < checkedMs.size(); ++i)
        ratios.push_back(checkedMs[i] / plainMs[i]);
    r.roundRatios = spreadOf(ratios);
    r.plainMs = median(plainMs);
    r.checkedMs = median(checkedMs);
    r.arbitrationBytes = job.world * (std::int64_t(trainer.layers().size()) + 4) * std::int64_t(sizeof(float));
    return r;
}

}  // namespace nanscope
