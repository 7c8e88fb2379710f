#include "replay/replayer.h"

#include "nanscope/capsule_file.h"
#include "nanscope/precision.h"
#include "nanscope/run_recorder.h"
#include "model/torchscript_loader.h"
#include "scenarios/scenarios.h"

#include <torch/torch.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace nanscope {

namespace {

// The embedded model file, written where the loader can read it; checked against the sha256 the
// run recorded when it started.
std::string writeEmbeddedModel(const RunFile &file, const std::string &sha)
{
    if (sha.empty())
        throw std::runtime_error(file.path() + ": the capsule's model file is not embedded (it could not be read "
                                               "when the capsule was written)");
    const std::string bytes = readEmbeddedFile(file.path(), sha);
    if (bytes.empty())
        throw std::runtime_error(file.path() + ": the capsule's embedded model file (sha256 " + sha + ") is missing");
    if (!file.info().modelSha256.empty() && file.info().modelSha256 != sha)
        throw std::runtime_error(file.path() + ": the embedded model file (sha256 " + sha.substr(0, 12) +
                                 "...) differs from the one the run started with (sha256 " +
                                 file.info().modelSha256.substr(0, 12) + "...): it changed during the run");
    char name[] = "/tmp/nanscope-replay-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0)
        throw std::runtime_error("cannot write a temporary file for the embedded model");
    ::close(fd);
    std::ofstream out(name, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out || fileSha256(name) != sha) {
        std::remove(name);
        throw std::runtime_error(file.path() + ": the embedded model file's sha256 does not match its contents");
    }
    return name;
}

// A capsule from another model (or a damaged one) must not be copied in: copy_ would broadcast a
// tensor of another shape without a word.
void checkFits(const std::vector<at::Tensor> &model, const std::vector<at::Tensor> &capsule, const char *what)
{
    if (model.size() != capsule.size())
        throw std::runtime_error("the capsule's state does not fit the run's model (" + std::to_string(capsule.size()) +
                                 " " + what + "s recorded, " + std::to_string(model.size()) + " in the model)");
    for (std::size_t i = 0; i < model.size(); ++i)
        if (model[i].sizes() != capsule[i].sizes() || model[i].scalar_type() != capsule[i].scalar_type())
            throw std::runtime_error(std::string("the capsule's state does not fit the run's model (") + what + " " +
                                     std::to_string(i) + " has another shape or type)");
}

}  // namespace

Replayer::Replayer(const RunFile &file, const CapsuleBlob &blob, const std::string &device,
                   std::vector<EventMessage> &notes)
    : capsule_(decodeCapsule(blob))
{
    RunConfig config = file.info().config;
    config.fault = {};
    config.nanSample = {};  // the capsule's batch holds the injected sample already
    config.parallel = {};   // one rank's step, computed alone
    config.capsuleSteps.clear();
    config.capsuleOnFailure = false;
    config.savePath.clear();
    config.opLevelOrigin = true;
    config.controls = capsule_.state.controls;
    config.device = device;
    if (capsule_.device != device)
        notes.push_back({"replay-device", {capsule_.device, device}});
    if (capsule_.libtorchVersion != libtorchVersion())
        notes.push_back({"replay-libtorch", {capsule_.libtorchVersion, libtorchVersion()}});

    Dataset batch{capsule_.state.batch.x, capsule_.state.batch.y, capsule_.state.batch.side};
    if (config.usesModelFile()) {
        const std::vector<CapsuleEntry> entries = runFileCapsules(file.path());
        std::string sha;
        for (const CapsuleEntry &e : entries)
            if (e.step == capsule_.state.step)
                sha = e.modelSha256;
        tempModel_ = writeEmbeddedModel(file, sha);
        config.modelPath = tempModel_;
        config.inputsPath.clear();
        config.targetsPath.clear();
    }
    try {
        RunSetup setup = buildRunSetup(config, &batch);
        regenerateWindow(setup.data, notes);
        trainer_ = std::make_unique<Trainer>(std::move(setup), config);
    } catch (const std::exception &e) {
        if (!tempModel_.empty())
            std::remove(tempModel_.c_str());
        throw std::runtime_error("cannot rebuild the run's model: " + firstLine(e.what()));
    }
    checkFits(trainer_->model().parameters(), capsule_.state.parameters, "parameter");
    checkFits(trainer_->model().buffers(), capsule_.state.buffers, "buffer");
    if (capsule_.snapshot) {
        checkFits(trainer_->model().parameters(), capsule_.snapshot->parameters, "snapshot parameter");
        checkFits(trainer_->model().buffers(), capsule_.snapshot->buffers, "snapshot buffer");
    }
    try {  // a damaged optimizer state shows here, once, as one line
        trainer_->restoreStepState(capsule_.state);
    } catch (const std::exception &e) {
        throw std::runtime_error("the capsule of step " + std::to_string(capsule_.state.step) +
                                 " is damaged: " + firstLine(e.what()));
    }
}

void Replayer::regenerateWindow(const Dataset &data, std::vector<EventMessage> &notes)
{
    if (!capsule_.windowFromSeed)
        return;
    std::size_t hashed = 0;
    for (TrainingBatch &b : capsule_.window) {
        if (b.x.defined())
            continue;  // kept whole in the capsule (an injected bad sample)
        bool fits = !b.indices.empty();
        for (std::int64_t index : b.indices)
            fits = fits && index >= 0 && index < data.x.size(0);
        if (fits) {
            const at::Tensor idx = torch::tensor(b.indices, torch::kLong);
            b.x = data.x.index_select(0, idx);
            b.y = data.y.index_select(0, idx);
            b.side.clear();
            for (const at::Tensor &side : data.side)
                b.side.push_back(side.index_select(0, idx));
        }
        if (!fits || dataHash(b) != capsule_.windowHashes.at(hashed++)) {
            notes.push_back({"replay-data-differs", {std::to_string(b.step)}});
            capsule_.snapshot.reset();
            capsule_.window.clear();
            return;
        }
    }
}

Replayer::~Replayer()
{
    trainer_.reset();
    if (!tempModel_.empty())
        std::remove(tempModel_.c_str());
}

const std::vector<Layer> &Replayer::layers() const { return trainer_->layers(); }

StepState Replayer::stateWith(const Controls &controls) const
{
    StepState s = capsule_.state;
    if (controls.precision != s.controls.precision || controls.lossScaling != s.controls.lossScaling) {
        s.lossScale = controls.lossScaling.initialScale;  // a new precision starts its own scaler
        s.growthTracker = 0;
    }
    s.controls = controls;
    s.learningRate = controls.learningRate;
    return s;
}

StepState Replayer::stateWithRows(const std::vector<std::size_t> &rows) const
{
    StepState s = capsule_.state;
    std::vector<std::int64_t> keep;
    for (std::size_t r : rows)
        keep.push_back(std::int64_t(r));
    const at::Tensor k = torch::tensor(keep, torch::kLong);
    TrainingBatch &b = s.batch;
    std::vector<std::int64_t> indices;
    for (std::size_t r : rows)
        indices.push_back(b.indices[r]);
    b.indices = indices;
    b.x = b.x.index_select(0, k);
    b.y = b.y.index_select(0, k);
    for (at::Tensor &t : b.side)
        t = t.index_select(0, k);
    return s;
}

const std::vector<BatchStatistic> &Replayer::holdBatchStatistics(const StepRecord &step)
{
    holding_ = false;
    statistics_ = measureBatchStatistics(trainer_->model(), step, [&](const std::function<void()> &prepare) {
        trainer_->resetSnapshots(capsule_.snapshot ? &*capsule_.snapshot : nullptr);
        trainer_->restoreStepState(capsule_.state);
        prepare();
        trainer_->setOpLevelOrigin(false);
        trainer_->computeStep(true);
    });
    trainer_->restoreStepState(capsule_.state);
    holding_ = true;
    return statistics_;
}

std::shared_ptr<StepRecord> Replayer::computeStep(const StepState &state, bool opLevel)
{
    trainer_->resetSnapshots(capsule_.snapshot ? &*capsule_.snapshot : nullptr);
    trainer_->restoreStepState(state);
    trainer_->setOpLevelOrigin(opLevel);
    if (!holding_)
        return trainer_->computeStep(true);
    nanscope::holdBatchStatistics(trainer_->model(), statistics_);
    try {
        std::shared_ptr<StepRecord> rec = trainer_->computeStep(true);
        nanscope::releaseBatchStatistics(trainer_->model(), statistics_);
        return rec;
    } catch (...) {
        nanscope::releaseBatchStatistics(trainer_->model(), statistics_);
        throw;
    }
}

bool Replayer::finiteThroughStep(const StepState &state, EventMessage &note)
{
    const std::shared_ptr<StepRecord> rec = computeStep(state, false);
    if (rec->failed()) {
        note = rec->origin.layerPath.empty()
                   ? EventMessage{"whatif-nonfinite-in", {phaseName(rec->origin.phase)}}
                   : EventMessage{"whatif-nonfinite-in-layer", {phaseName(rec->origin.phase), rec->origin.layerPath}};
        return false;
    }
    std::vector<Event> events;
    std::string stop;
    trainer_->applyStep(*rec, events, stop);
    if (!trainer_->stateFinite()) {
        note = {"whatif-update-nonfinite", {}};
        return false;
    }
    return stop.empty();
}

bool Replayer::finiteFromSnapshot(const Controls &controls, EventMessage &note)
{
    if (!capsule_.snapshot) {
        note = {"whatif-no-snapshot", {}};
        return false;
    }
    std::vector<TrainingBatch> batches = capsule_.window;
    batches.push_back(capsule_.state.batch);
    Snapshot start = *capsule_.snapshot;
    const Controls &recorded = capsule_.state.controls;
    if (controls.precision != recorded.precision || controls.lossScaling != recorded.lossScaling) {
        start.lossScale = controls.lossScaling.initialScale;
        start.growthTracker = 0;
    }
    trainer_->resetSnapshots(&start);
    trainer_->restoreSnapshotState(start, controls, batches);
    for (std::size_t i = 0; i < batches.size(); ++i) {
        trainer_->setOpLevelOrigin(false);
        const std::shared_ptr<StepRecord> rec = trainer_->computeStep(false);
        if (rec->failed()) {
            note = {"whatif-nonfinite-at", {std::to_string(rec->step)}};
            return false;
        }
        std::vector<Event> events;
        std::string stop;
        trainer_->applyStep(*rec, events, stop);
        if (!stop.empty()) {
            note = {"", {stop}};  // the policy's own sentence, in English
            return false;
        }
    }
    if (!trainer_->stateFinite()) {
        note = {"whatif-last-update-nonfinite", {}};
        return false;
    }
    return true;
}

}  // namespace nanscope
