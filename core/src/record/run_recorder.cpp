// RunRecorder: the observer side only queues (a short lock, no I/O); the writer thread turns the
// queue into SQL in one transaction per batch.
#include "nanscope/run_recorder.h"

#include "record/run_file_replace.h"
#include "record/run_writer.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>

namespace nanscope {

namespace {

struct Start {
    std::vector<Layer> layers;
    RunConfig config;
};
struct Heartbeat {};
using Item = std::variant<Start, StepRecordPtr, Event, RunSummary, Heartbeat, CapsulePtr>;

}  // namespace

struct RunRecorder::Impl {
    Impl(const std::string &path, RecorderOptions options) : path(path), options(std::move(options)) {}

    void writerLoop();
    void writeBatch(std::deque<Item> &batch);
    void enqueue(Item item);

    std::string path;
    RecorderOptions options;
    std::unique_ptr<record::Database> db;
    std::unique_ptr<record::RunWriter> out;  // over db: goes before it

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
    record::refuseToReplace(path, d_->options.overwrite);
    record::createRunFile(path);
    d_->db = std::make_unique<record::Database>(path, record::Database::Mode::Create);
    record::Database &db = *d_->db;
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");  // WAL + NORMAL: a killed process loses nothing committed
    // A thinning pass (docs/run-file.md, "Layer detail") deletes many rows in one transaction: the
    // log it leaves is cut back after the next checkpoint rather than kept at its largest.
    db.exec("PRAGMA journal_size_limit = 67108864");
    d_->out = std::make_unique<record::RunWriter>(db, d_->options.keep);
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
    {
        // The run row goes to disk at once, not at the next commit: the file opens as a run.
        std::lock_guard<std::mutex> lock(d_->mutex);
        d_->flushWanted = true;
    }
    d_->wake.notify_one();
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

void RunRecorder::capsuleSaved(const CapsulePtr &capsule)
{
    {
        std::lock_guard<std::mutex> lock(d_->mutex);
        if (capsule->run != d_->run)
            return;
    }
    d_->enqueue(capsule);
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
    d_->out.reset();
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
            out->step(*r);
            ++steps;
        } else if (const auto *e = std::get_if<Event>(&item)) {
            out->event(*e);
        } else if (const auto *s = std::get_if<Start>(&item)) {
            out->start(s->layers, s->config);
        } else if (const auto *capsule = std::get_if<CapsulePtr>(&item)) {
            out->capsule(**capsule);
        } else if (const auto *summary = std::get_if<RunSummary>(&item)) {
            out->finish(*summary);
        } else {
            out->heartbeat();
        }
    }
    out->batchDone();
    db->exec("COMMIT");
    std::lock_guard<std::mutex> lock(mutex);
    stepsWritten += steps;
}

}  // namespace nanscope
