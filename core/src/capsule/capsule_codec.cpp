#include "capsule/capsule_codec.h"

#include "model/torchscript_loader.h"
#include "record/run_file_json.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include <sstream>

namespace nanscope {

namespace {


constexpr int kCapsuleFormat = 1;

at::Tensor bytesTensor(const std::string &bytes)
{
    at::Tensor t = torch::empty({std::int64_t(bytes.size())}, torch::kUInt8);
    std::memcpy(t.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
    return t;
}

std::string tensorBytes(const at::Tensor &t)
{
    const at::Tensor c = t.to(torch::kUInt8).contiguous();
    return std::string(reinterpret_cast<const char *>(c.data_ptr<std::uint8_t>()), std::size_t(c.numel()));
}

// Tensors of the archive go to the CPU: a capsule replays on a machine without the device.
void writeTensors(torch::serialize::OutputArchive &a, const std::string &prefix, const std::vector<at::Tensor> &ts)
{
    for (std::size_t i = 0; i < ts.size(); ++i)
        a.write(prefix + std::to_string(i), ts[i].detach().to(torch::kCPU));
}

at::Tensor readTensor(torch::serialize::InputArchive &a, const std::string &key)
{
    c10::IValue v;
    if (!a.try_read(key, v) || !v.isTensor())
        throw CapsuleError("the capsule lacks '" + key + "'");
    return v.toTensor();
}

std::vector<at::Tensor> readTensors(torch::serialize::InputArchive &a, const std::string &prefix, std::size_t n)
{
    std::vector<at::Tensor> out;
    for (std::size_t i = 0; i < n; ++i)
        out.push_back(readTensor(a, prefix + std::to_string(i)));
    return out;
}

Json batchJson(const TrainingBatch &b) { return {{"step", b.step}, {"indices", b.indices}, {"side", b.side.size()}}; }

void hashBytes(std::uint64_t &h, const at::Tensor &t)
{
    const at::Tensor c = t.detach().to(torch::kCPU).contiguous();
    const auto *p = static_cast<const unsigned char *>(c.data_ptr());
    const std::size_t n = std::size_t(c.numel()) * c.element_size();
    for (std::size_t i = 0; i < n; ++i)
        h = (h ^ p[i]) * 1099511628211ULL;
}

void writeBatch(torch::serialize::OutputArchive &a, const std::string &prefix, const TrainingBatch &b)
{
    a.write(prefix + "x", b.x.detach().to(torch::kCPU));
    a.write(prefix + "y", b.y.detach().to(torch::kCPU));
    writeTensors(a, prefix + "side.", b.side);
}

TrainingBatch readBatch(torch::serialize::InputArchive &a, const std::string &prefix, const Json &j)
{
    TrainingBatch b;
    b.step = j.at("step").get<int>();
    b.indices = j.at("indices").get<std::vector<std::int64_t>>();
    b.x = readTensor(a, prefix + "x");
    b.y = readTensor(a, prefix + "y");
    b.side = readTensors(a, prefix + "side.", j.at("side").get<std::size_t>());
    return b;
}

}  // namespace

Capsule captureCapsule(const Trainer &trainer, const StepRecord &record, const RunConfig &config,
                       const std::string &reason)
{
    Capsule c;
    c.reason = reason;
    c.state = trainer.stateBeforeStep(record);
    c.device = config.device;
    c.threads = torch::get_num_threads();
    c.precision = trainer.precisionLabel();
    c.libtorchVersion = libtorchVersion();
    c.seed = config.seed;
    const Snapshot *s = trainer.snapshots().newest();
    if (!s)
        return c;
    // The batches from the snapshot's step on, which the trainer holds while they are complete.
    const std::vector<TrainingBatch> &held = trainer.batchesSinceSnapshot();
    std::vector<TrainingBatch> window;
    for (const TrainingBatch &b : held)
        if (b.step < record.step)
            window.push_back(b);
    // After a rollback the snapshot's state trained on the batches drawn since the rollback.
    const int from = trainer.batchesHeldFrom();
    const bool complete = window.empty() ? from < 0 || from == record.step : window.front().step == from;
    if (complete) {
        c.snapshot = *s;
        c.window = std::move(window);
        c.windowFromSeed = !config.usesModelFile();  // a scenario's data is the seed's
    }
    return c;
}

std::uint64_t dataHash(const TrainingBatch &b)
{
    std::uint64_t h = 14695981039346656037ULL;
    hashBytes(h, b.x);
    hashBytes(h, b.y);
    for (const at::Tensor &t : b.side)
        hashBytes(h, t);
    return h;
}

CapsuleBlob encodeCapsule(const Capsule &c, int run)
{
    torch::serialize::OutputArchive a;
    const StepState &s = c.state;
    writeTensors(a, "parameters.", s.parameters);
    writeTensors(a, "buffers.", s.buffers);
    a.write("optimizer", bytesTensor(s.optimizerState));
    writeBatch(a, "batch.", s.batch);
    Json window = Json::array();
    Json snapshot = nullptr;
    if (c.snapshot) {
        writeTensors(a, "snapshot.parameters.", c.snapshot->parameters);
        writeTensors(a, "snapshot.buffers.", c.snapshot->buffers);
        a.write("snapshot.optimizer", bytesTensor(c.snapshot->optimizerState));
        snapshot = {{"step", c.snapshot->step},
                    {"learning_rate", c.snapshot->learningRate},
                    {"loss_scale", c.snapshot->lossScale},
                    {"growth_tracker", c.snapshot->growthTracker}};
        for (std::size_t i = 0; i < c.window.size(); ++i) {
            Json j = batchJson(c.window[i]);
            if (c.windowFromSeed && !c.window[i].injected)  // an injected sample is not the seed's
                j["data_hash"] = std::to_string(dataHash(c.window[i]));
            else
                writeBatch(a, "window." + std::to_string(i) + ".", c.window[i]);
            window.push_back(j);
        }
    }
    std::ostringstream out;
    a.save_to(out);

    const Json meta = {{"format", kCapsuleFormat},
                       {"step", s.step},
                       {"reason", c.reason},
                       {"libtorch_version", c.libtorchVersion},
                       {"device", c.device},
                       {"threads", c.threads},
                       {"precision", c.precision},
                       {"seed", c.seed},
                       {"rng_seed", stepSeed(c.seed, s.step)},
                       {"learning_rate", s.learningRate},
                       {"controls", record::controlsJson(s.controls)},
                       {"loss_scale", s.lossScale},
                       {"growth_tracker", s.growthTracker},
                       {"prev_params_finite", s.prevParamsFinite},
                       {"parameters", s.parameters.size()},
                       {"buffers", s.buffers.size()},
                       {"batch", batchJson(s.batch)},
                       {"snapshot", snapshot},
                       {"window", window}};
    CapsuleBlob blob;
    blob.run = run;
    blob.step = s.step;
    blob.reason = c.reason;
    blob.meta = meta.dump();
    blob.state = out.str();
    blob.snapshotStep = c.snapshot ? c.snapshot->step : -1;
    return blob;
}

Capsule decodeCapsule(const CapsuleBlob &blob)
{
    Capsule c;
    try {
        const Json meta = Json::parse(blob.meta);
        if (meta.at("format").get<int>() > kCapsuleFormat)
            throw CapsuleError("the capsule was written by a newer NaNScope (format " +
                               std::to_string(meta.at("format").get<int>()) + ")");
        torch::serialize::InputArchive a;
        std::istringstream in(blob.state);
        a.load_from(in);
        c.reason = meta.at("reason").get<std::string>();
        c.libtorchVersion = meta.at("libtorch_version").get<std::string>();
        c.device = meta.at("device").get<std::string>();
        c.threads = meta.at("threads").get<int>();
        c.precision = meta.at("precision").get<std::string>();
        c.seed = meta.at("seed").get<std::uint64_t>();
        StepState &s = c.state;
        s.step = meta.at("step").get<int>();
        s.learningRate = meta.at("learning_rate").get<double>();
        s.controls = record::controlsFrom(meta.at("controls"));
        s.lossScale = meta.at("loss_scale").get<double>();
        s.growthTracker = meta.at("growth_tracker").get<int>();
        s.prevParamsFinite = meta.at("prev_params_finite").get<bool>();
        s.parameters = readTensors(a, "parameters.", meta.at("parameters").get<std::size_t>());
        s.buffers = readTensors(a, "buffers.", meta.at("buffers").get<std::size_t>());
        s.optimizerState = tensorBytes(readTensor(a, "optimizer"));
        s.batch = readBatch(a, "batch.", meta.at("batch"));
        const Json &snap = meta.at("snapshot");
        if (!snap.is_null()) {
            Snapshot sn;
            sn.step = snap.at("step").get<int>();
            sn.learningRate = snap.at("learning_rate").get<double>();
            sn.lossScale = snap.at("loss_scale").get<double>();
            sn.growthTracker = snap.at("growth_tracker").get<int>();
            sn.parameters = readTensors(a, "snapshot.parameters.", s.parameters.size());
            sn.buffers = readTensors(a, "snapshot.buffers.", s.buffers.size());
            sn.optimizerState = tensorBytes(readTensor(a, "snapshot.optimizer"));
            c.snapshot = std::move(sn);
            const Json &window = meta.at("window");
            for (std::size_t i = 0; i < window.size(); ++i) {
                if (!window[i].contains("data_hash")) {
                    c.window.push_back(readBatch(a, "window." + std::to_string(i) + ".", window[i]));
                    continue;
                }
                c.windowFromSeed = true;
                TrainingBatch b;
                b.step = window[i].at("step").get<int>();
                b.indices = window[i].at("indices").get<std::vector<std::int64_t>>();
                c.window.push_back(std::move(b));
                c.windowHashes.push_back(std::stoull(window[i].at("data_hash").get<std::string>()));
            }
            if (c.windowFromSeed)  // in a window from the seed, a batch kept whole was injected
                for (TrainingBatch &b : c.window)
                    b.injected = b.x.defined();
        }
    } catch (const CapsuleError &) {
        throw;
    } catch (const std::exception &e) {
        throw CapsuleError("the capsule of step " + std::to_string(blob.step) + " is damaged: " + firstLine(e.what()));
    }
    return c;
}

}  // namespace nanscope
