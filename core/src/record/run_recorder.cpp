// RunRecorder: the observer side only queues (a short lock, no I/O); the writer thread turns the
// queue into SQL in one transaction per batch.
#include "nanscope/run_recorder.h"

#include "record/run_file_json.h"
#include "record/run_file_schema.h"
#include "record/sqlite_db.h"

#include <torch/csrc/api/include/torch/version.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>

#ifndef NANSCOPE_VERSION
#define NANSCOPE_VERSION "unknown"
#endif

namespace nanscope {

namespace {

struct Start {
    std::vector<Layer> layers;
    RunConfig config;
};
struct Heartbeat {};
using Item = std::variant<Start, StepRecordPtr, Event, RunSummary, Heartbeat>;

std::string utcNow()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string libtorchVersion()
{
    return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
           std::to_string(TORCH_VERSION_PATCH);
}

std::string indexList(const std::vector<std::int64_t> &v) { return v.empty() ? "" : record::Json(v).dump(); }

}  // namespace

struct RunRecorder::Impl {
    Impl(const std::string &path, RecorderOptions options) : path(path), options(std::move(options)) {}

    void writerLoop();
    void writeBatch(std::deque<Item> &batch);
    void write(const Start &s);
    void write(const StepRecord &r);
    void write(const Event &e);
    void write(const RunSummary &s);
    void enqueue(Item item);

    std::string path;
    RecorderOptions options;
    std::unique_ptr<record::Database> db;
    std::unique_ptr<record::Statement> insertStep, insertLayer, insertNonFinite;  // before db dies

    std::mutex mutex;
    std::condition_variable wake;     // work for the writer
    std::condition_variable written;  // the writer committed a batch
    std::deque<Item> queue;
    bool flushWanted = false;
    bool stopping = false;
    std::int64_t enqueued = 0;
    std::int64_t committed = 0;  // items committed or dropped after an error
    std::int64_t stepsWritten = 0;
    std::string error;
    int run = -1;                 // the run being recorded
    std::int64_t layerCount = 0;  // writer thread: the key of layer_steps
    std::thread writer;
    bool closed = false;
};

RunRecorder::RunRecorder(const std::string &path, RecorderOptions options)
    : d_(std::make_unique<Impl>(path, std::move(options)))
{
    // A previous file of that name (and its journal) would mix two runs.
    for (const char *suffix : {"", "-wal", "-shm", "-journal"})
        std::remove((path + suffix).c_str());
    d_->db = std::make_unique<record::Database>(path, record::Database::Mode::Create);
    record::Database &db = *d_->db;
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");  // WAL + NORMAL: a killed process loses nothing committed
    db.exec("PRAGMA application_id = " + std::to_string(record::kRunFileApplicationId));
    db.exec("PRAGMA user_version = " + std::to_string(kRunFileFormatVersion));
    db.exec("BEGIN");
    record::createSchema(db);
    db.exec("COMMIT");
    d_->writer = std::thread([this] { d_->writerLoop(); });
}

RunRecorder::~RunRecorder() { close(); }

const std::string &RunRecorder::path() const { return d_->path; }

std::string RunRecorder::error() const
{
    std::lock_guard<std::mutex> lock(d_->mutex);
    return d_->error;
}

std::int64_t RunRecorder::stepsWritten() const
{
    std::lock_guard<std::mutex> lock(d_->mutex);
    return d_->stepsWritten;
}

void RunRecorder::Impl::enqueue(Item item)
{
    std::lock_guard<std::mutex> lock(mutex);
    if (closed)
        return;
    queue.push_back(std::move(item));
    ++enqueued;
}

void RunRecorder::runStarted(int run, const std::vector<Layer> &layers, const RunConfig &config)
{
    {
        std::lock_guard<std::mutex> lock(d_->mutex);
        if (d_->run >= 0)
            return;
        d_->run = run;
    }
    d_->enqueue(Start{layers, config});
    d_->wake.notify_one();  // the run row goes to disk at once: the file opens as a run
}

void RunRecorder::stepRecorded(const StepRecordPtr &record)
{
    {
        std::lock_guard<std::mutex> lock(d_->mutex);
        if (record->run != d_->run)
            return;
    }
    d_->enqueue(record);
}

void RunRecorder::eventRaised(const Event &event)
{
    {
        std::lock_guard<std::mutex> lock(d_->mutex);
        if (event.run != d_->run)
            return;
    }
    d_->enqueue(event);
}

void RunRecorder::runFinished(const RunSummary &summary)
{
    {
        std::lock_guard<std::mutex> lock(d_->mutex);
        if (summary.run != d_->run)
            return;
    }
    d_->enqueue(summary);
    flush();
}

void RunRecorder::flush()
{
    std::unique_lock<std::mutex> lock(d_->mutex);
    if (d_->closed)
        return;
    const std::int64_t target = d_->enqueued;
    d_->flushWanted = true;
    d_->wake.notify_one();
    d_->written.wait(lock, [&] { return d_->committed >= target; });
}

void RunRecorder::close()
{
    {
        std::lock_guard<std::mutex> lock(d_->mutex);
        if (d_->closed)
            return;
        d_->stopping = true;
    }
    d_->wake.notify_one();
    if (d_->writer.joinable())
        d_->writer.join();
    std::lock_guard<std::mutex> lock(d_->mutex);
    d_->closed = true;
    d_->insertStep.reset();
    d_->insertLayer.reset();
    d_->insertNonFinite.reset();
    if (d_->error.empty()) {
        // One self-contained file once nobody writes: a copy needs no -wal beside it. A reader
        // still holding the file keeps it in WAL, which is as good.
        try {
            d_->db->exec("PRAGMA journal_mode = DELETE");
        } catch (const RunFileError &) {
        }
    }
    d_->db.reset();
}

void RunRecorder::Impl::writerLoop()
{
    const auto interval = std::chrono::milliseconds(std::max(1, options.commitIntervalMs));
    auto lastBeat = std::chrono::steady_clock::now();
    for (;;) {
        std::deque<Item> batch;
        bool last = false;
        {
            std::unique_lock<std::mutex> lock(mutex);
            wake.wait_for(lock, interval, [&] { return stopping || flushWanted; });
            batch.swap(queue);
            flushWanted = false;
            last = stopping;
        }
        const std::size_t n = batch.size();
        bool failed;
        {
            std::lock_guard<std::mutex> lock(mutex);
            failed = !error.empty();
        }
        // A reader following the file tells a quiet writer (a paused run) from a dead one by this
        // counter: it goes up about once a second while the recorder lives.
        const auto now = std::chrono::steady_clock::now();
        const bool beat = now - lastBeat >= std::chrono::seconds(1);
        if (!failed && (n > 0 || beat)) {
            try {
                if (beat) {
                    lastBeat = now;
                    batch.emplace_back(Heartbeat{});
                }
                writeBatch(batch);
            } catch (const std::exception &e) {
                try {
                    db->exec("ROLLBACK");
                } catch (const std::exception &) {
                }
                std::function<void(const std::string &)> report;
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    error = std::string("recording stopped: ") + e.what();
                    report = options.onError;
                }
                if (report)
                    report(error);
            }
        }
        {
            std::lock_guard<std::mutex> lock(mutex);
            committed += std::int64_t(n);
        }
        written.notify_all();
        if (last)
            return;
    }
}

void RunRecorder::Impl::writeBatch(std::deque<Item> &batch)
{
    db->exec("BEGIN");
    std::int64_t steps = 0;
    for (const Item &item : batch) {
        if (const auto *r = std::get_if<StepRecordPtr>(&item)) {
            write(**r);
            ++steps;
        } else if (const auto *e = std::get_if<Event>(&item)) {
            write(*e);
        } else if (const auto *s = std::get_if<Start>(&item)) {
            write(*s);
        } else if (const auto *summary = std::get_if<RunSummary>(&item)) {
            write(*summary);
        } else {
            db->exec("UPDATE run SET heartbeat = heartbeat + 1");
        }
    }
    db->exec("COMMIT");
    std::lock_guard<std::mutex> lock(mutex);
    stepsWritten += steps;
}

void RunRecorder::Impl::write(const Start &s)
{
    const RunConfig &c = s.config;
    const Controls controls = initialControls(c);
    record::Statement run = db->prepare(
        "INSERT INTO run (format_version, nanscope_version, libtorch_version, created, scenario, model_path, "
        "model_sha256, device, precision, seed, config, controls) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    run.bind(1, kRunFileFormatVersion)
        .bind(2, std::string(NANSCOPE_VERSION))
        .bind(3, libtorchVersion())
        .bind(4, utcNow())
        .bindText(5, c.usesModelFile() ? std::string() : c.scenario)
        .bindText(6, c.modelPath)
        .bindText(7, c.usesModelFile() ? fileSha256(c.modelPath) : std::string())
        .bind(8, c.device)
        .bind(9, std::string(precisionName(controls.precision)))
        .bind(10, std::int64_t(c.seed))
        .bind(11, record::configJson(c, controls, stepsToRun(c)).dump())
        .bind(12, record::controlsJson(controls).dump());
    run.run();
    layerCount = std::int64_t(s.layers.size());
    record::Statement layer = db->prepare("INSERT INTO layers (id, path, type, parent) VALUES (?,?,?,?)");
    for (const Layer &l : s.layers) {
        layer.bind(1, l.id).bind(2, l.path).bind(3, l.type);
        if (l.parent >= 0)
            layer.bind(4, l.parent);
        else
            layer.bindNull(4);
        layer.run();
    }
}

void RunRecorder::Impl::write(const StepRecord &r)
{
    if (!insertStep) {  // prepared once, on the writer thread
        insertStep = std::make_unique<record::Statement>(db->prepare(
            "INSERT OR REPLACE INTO steps (step, loss, grad_norm, grad_norm_clipped, lr, loss_scale, skipped, "
            "rolled_back, why, step_ms, origin_phase, origin_layer, origin_op, origin_source, origin_produced, "
            "origin_explanation, input_numel, input_min, input_max, input_norm, input_nan, input_posinf, "
            "input_neginf, loss_numel, loss_min, loss_max, loss_norm, loss_nan, loss_posinf, loss_neginf, "
            "bad_samples, quarantined, zeroed_gradients, overflow_layers) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
        insertLayer = std::make_unique<record::Statement>(
            db->prepare("INSERT OR REPLACE INTO layer_steps VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
        insertNonFinite = std::make_unique<record::Statement>(
            db->prepare("INSERT OR REPLACE INTO layer_nonfinite VALUES (?,?,?,?,?,?)"));
    }
    record::Statement *layer = insertLayer.get(), *nonFinite = insertNonFinite.get();
    record::Statement &s = *insertStep;
    s.bind(1, r.step)
        .bind(2, r.loss)
        .bind(3, r.gradNorm)
        .bind(4, r.gradNormClipped)
        .bind(5, r.learningRate)
        .bind(6, r.lossScale)
        .bind(7, int(r.skipped))
        .bind(8, int(r.rolledBack))
        .bindText(9, r.why)
        .bind(10, r.stepMillis);
    if (r.origin.valid()) {
        s.bind(11, std::string(phaseName(r.origin.phase)));
        if (r.origin.layer >= 0)
            s.bind(12, r.origin.layer);
        s.bindText(13, r.origin.op).bindText(14, r.origin.source).bind(15, int(r.origin.produced));
        s.bindText(16, r.origin.explanation);
    }
    record::bindHealthValues(s, 17, r.inputHealth);
    record::bindCounts(s, 21, r.inputHealth);
    record::bindHealthValues(s, 24, r.lossHealth);
    record::bindCounts(s, 28, r.lossHealth);
    s.bindText(31, indexList(r.badSamples)).bindText(32, indexList(r.quarantined)).bind(33, int(r.zeroedGradients));
    s.bindText(34, r.overflowLayers.empty() ? std::string() : record::Json(r.overflowLayers).dump());
    s.run();

    for (std::size_t i = 0; i < r.layers.size() && std::int64_t(i) < layerCount; ++i) {
        const LayerHealth &lh = r.layers[i];
        const TensorHealth *kinds[] = {&lh.forward, &lh.grad, &lh.params, &lh.paramGrads};
        layer->bind(1, record::layerStepKey(r.step, std::int64_t(i), layerCount)).bind(2, int(lh.inputFinite));
        for (int k = 0; k < record::kHealthKinds; ++k) {
            record::bindHealthValues(*layer, 3 + 4 * k, *kinds[k], record::Range::Compact);
            if (kinds[k]->hasNonFinite()) {
                nonFinite->bind(1, r.step).bind(2, std::int64_t(i));
                nonFinite->bind(3, std::string(record::healthKindName(record::HealthKind(k))));
                record::bindCounts(*nonFinite, 4, *kinds[k]);
                nonFinite->run();
            }
        }
        layer->run();
    }
}

void RunRecorder::Impl::write(const Event &e)
{
    record::Statement s = db->prepare("INSERT INTO events (step, kind, layer, text, origin) VALUES (?,?,?,?,?)");
    s.bind(1, e.step).bind(2, std::string(record::eventKindName(e.kind)));
    if (e.layer >= 0)
        s.bind(3, e.layer);
    s.bind(4, e.text);
    if (e.origin.valid())
        s.bind(5, record::originJson(e.origin).dump());
    s.run();
    const std::int64_t id = db->singleInt("SELECT last_insert_rowid()");
    record::Statement change =
        db->prepare("INSERT INTO control_changes (event, step, control, old, new) VALUES (?,?,?,?,?)");
    for (const ControlChange &c : e.changes) {
        change.bind(1, id).bind(2, e.step).bind(3, c.control).bind(4, c.before).bind(5, c.after);
        change.run();
    }
}

void RunRecorder::Impl::write(const RunSummary &s)
{
    record::Statement u = db->prepare("UPDATE run SET summary = ?, finished = ?");
    u.bind(1, record::summaryJson(s).dump()).bind(2, utcNow());
    u.run();
}

}  // namespace nanscope
