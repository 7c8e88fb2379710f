#include "nanscope/recorded_run.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>

namespace nanscope {

SummaryBuilder::SummaryBuilder(const RunFileInfo &info, std::size_t layers) : tally_(layers)
{
    s_.source = runSource(info.config);
    s_.precision = info.precision;
    s_.finalLearningRate = initialControls(info.config).learningRate;
    s_.finished = false;
}

void SummaryBuilder::add(const StepRecord &r)
{
    tally_.add(r);
    s_.finalLearningRate = r.learningRate;
    s_.finalLossScale = r.lossScale;
    bool paramsFinite = true;
    for (const LayerHealth &lh : r.layers)
        paramsFinite = paramsFinite && !lh.params.hasNonFinite();
    s_.finalStateFinite = paramsFinite;
}

// The final rate, scale and state come from the steps after the chunks: the last chunk is always
// played step by step.
void SummaryBuilder::add(const StepChunk &c) { tally_.add(c.tally); }

void SummaryBuilder::add(const Event &e) { s_.rollbacks += e.kind == EventKind::Rollback ? 1 : 0; }

RunSummary SummaryBuilder::summary() const
{
    RunSummary s = s_;
    tally_.fill(s);
    return s;
}

RecordedRun::RecordedRun(const std::string &path, RecordedRunOptions options)
    : path_(path), options_(options), file_(std::make_unique<RunFile>(path))
{
    info_ = file_->info();
    asked_ = initialControls(info_.config);
    try {
        // A rank of a job is steered with all its ranks at one step (`nanscope steer FOLDER`), never
        // alone: its parameters would part from the others'.
        if (options_.follow && !info_.finished && info_.worldSize <= 1)
            steerRunId_ = steerableRunId(info_, path_);
    } catch (const RunFileError &) {
        // Not a loop that reads requests: watched only.
    }
}

RecordedRun::~RecordedRun()
{
    stop();
    if (player_.joinable())
        player_.join();
}

bool RecordedRun::start(const RunConfig &, std::string *)
{
    stop();
    if (player_.joinable())
        player_.join();
    int run;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        run = ++run_;
        playing_ = true;
    }
    stopRequested_ = false;
    player_ = std::thread([this, run] { play(run); });
    return true;
}

void RecordedRun::stop() { stopRequested_ = true; }

SessionState RecordedRun::state() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return state_;
}

int RecordedRun::runId() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return run_;
}

bool RecordedRun::wait(int timeoutMs)
{
    std::unique_lock<std::mutex> lock(mutex_);
    const auto done = [&] { return !playing_; };
    if (timeoutMs < 0) {
        changed_.wait(lock, done);
        return true;
    }
    return changed_.wait_for(lock, std::chrono::milliseconds(timeoutMs), done);
}

void RecordedRun::waitForObservers()
{
    for (;;) {
        std::size_t most = 0;
        observers_.forEach([&most](const RunObserver &o) { most = std::max(most, o.backlog()); });
        const std::size_t layers = std::max<std::size_t>(1, file_->layers().size());
        const std::size_t limit = std::max<std::size_t>(128, options_.maxBacklogLayerSteps / layers);
        if (most <= limit || stopRequested_)
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void RecordedRun::setState(SessionState s)
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state_ = s;
    }
    observers_.forEach([s](RunObserver &o) { o.stateChanged(s); });
}

// The chunks before the one holding the file's newest step: every chunk before it is complete.
// Returns the last step they cover (-1: none were played).
int RecordedRun::playChunks(int run, const std::function<void(int)> &deliverEventsUpTo, SummaryBuilder &builder)
{
    const RunFile &file = *file_;
    const int newest = file.lastStep();
    if (options_.chunkedAbove < 0 || newest < options_.chunkedAbove)
        return -1;
    int lastStep = -1, lastChunk = -1;
    const int before = chunkOfStep(newest);
    const auto deliver = [&](const StepChunkPtr &c) {
        builder.add(*c);
        observers_.forEach([&](RunObserver &o) { o.stepsChunked(c); });
        deliverEventsUpTo(c->lastStep);
        lastStep = c->lastStep;
    };
    if (options_.coarseAbove >= 0 && newest >= options_.coarseAbove) {
        // Coarse chunks of complete groups of chunks; the chunks after the last one read come next.
        for (int lastCoarse = -1; !stopRequested_;) {
            constexpr int kCoarsePerRead = 64;
            const std::vector<StepChunkPtr> coarse =
                file.readCoarseChunks(lastCoarse, before / kCoarseChunkChunks, kCoarsePerRead, run);
            for (const StepChunkPtr &c : coarse) {
                deliver(c);
                lastCoarse = c->index;
                lastChunk = (c->index + 1) * kCoarseChunkChunks - 1;
            }
            waitForObservers();
            if (int(coarse.size()) < kCoarsePerRead)
                break;
        }
    }
    while (!stopRequested_) {
        constexpr int kChunksPerRead = 256;
        const std::vector<StepChunkPtr> chunks = file.readChunks(lastChunk, before, kChunksPerRead, run);
        for (const StepChunkPtr &c : chunks) {
            deliver(c);
            lastChunk = c->index;
        }
        waitForObservers();
        if (int(chunks.size()) < kChunksPerRead)
            break;
    }
    return lastStep;
}

void RecordedRun::play(int run)
{
    RunFile &file = *file_;
    RunSummary summary;
    std::string error;
    std::unique_ptr<SummaryBuilder> built;  // what was read, should reading fail half-way
    try {
        file.refresh();
        RunConfig config = file.info().config;
        const std::vector<Layer> &layers = file.layers();
        observers_.forEach([&](RunObserver &o) { o.runStarted(run, layers, config); });
        setState(SessionState::Running);
        built = std::make_unique<SummaryBuilder>(file.info(), layers.size());
        SummaryBuilder &builder = *built;
        int lastStep = -1;
        std::int64_t lastEvent = 0;
        std::vector<Event> pendingEvents;
        for (Event &e : file.readEvents(lastEvent, &lastEvent)) {
            e.run = run;
            pendingEvents.push_back(std::move(e));
        }
        // Events go out with the steps they belong to, so a view sees them where they happened.
        const auto deliverEventsUpTo = [&](int step) {
            std::size_t n = 0;
            while (n < pendingEvents.size() && pendingEvents[n].step <= step)
                ++n;
            for (std::size_t i = 0; i < n; ++i)
                builder.add(pendingEvents[i]);
            for (std::size_t i = 0; i < n; ++i)
                observers_.forEach([&](RunObserver &o) { o.eventRaised(pendingEvents[i]); });
            pendingEvents.erase(pendingEvents.begin(), pendingEvents.begin() + std::ptrdiff_t(n));
        };
        lastStep = playChunks(run, deliverEventsUpTo, builder);
        std::int64_t heartbeat = -1;
        auto heartbeatChanged = std::chrono::steady_clock::now();
        bool writerGone = false;
        for (;;) {
            // Read the run row first: steps committed before the summary are all there then.
            file.refresh();
            const bool finished = file.info().finished;
            const auto now = std::chrono::steady_clock::now();
            if (file.info().heartbeat != heartbeat) {
                heartbeat = file.info().heartbeat;
                heartbeatChanged = now;
            } else if (!finished && now - heartbeatChanged >= std::chrono::milliseconds(options_.writerGoneMs)) {
                writerGone = true;
            }
            for (Event &e : file.readEvents(lastEvent, &lastEvent)) {
                e.run = run;
                pendingEvents.push_back(std::move(e));
            }
            for (;;) {
                const std::vector<StepRecordPtr> steps = file.readSteps(lastStep, options_.stepsPerRead, true, run);
                for (StepRecordPtr r : steps) {
                    // A thinned step shows its chunk's layers once the chunk is written.
                    r = withChunkLayers(file, r, &lastChunk_);
                    deliverEventsUpTo(r->step - 1);
                    builder.add(*r);
                    observers_.forEach([&](RunObserver &o) { o.stepRecorded(r); });
                    deliverEventsUpTo(r->step);
                    lastStep = r->step;
                }
                waitForObservers();
                if (int(steps.size()) < options_.stepsPerRead || stopRequested_)
                    break;
            }
            // The step being computed may have news before its record: a loop paused before its
            // update waits for a decision, and answers to requests name the step they apply to.
            deliverEventsUpTo(lastStep + 1);
            if (finished || !options_.follow || stopRequested_ || writerGone) {
                deliverEventsUpTo(std::numeric_limits<int>::max());
                if (writerGone) {
                    Event e(EventKind::Error, lastStep, -1,
                            "the writer of this run stopped without finishing it (no sign of it for " +
                                std::to_string(options_.writerGoneMs / 1000) + " s): the run ends here");
                    e.run = run;
                    observers_.forEach([&](RunObserver &o) { o.eventRaised(e); });
                }
                summary = finished ? file.info().summary : builder.summary();
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(options_.pollMs));
        }
    } catch (const std::exception &e) {
        error = e.what();
        if (built)
            summary = built->summary();  // the steps read before the file failed
        summary.error = error;
        summary.finished = false;
    }
    summary.run = run;
    setState(summary.error.empty() ? SessionState::Finished : SessionState::Failed);
    observers_.forEach([&](RunObserver &o) { o.runFinished(summary); });
    {
        std::lock_guard<std::mutex> lock(mutex_);
        playing_ = false;
    }
    changed_.notify_all();
}

}  // namespace nanscope
