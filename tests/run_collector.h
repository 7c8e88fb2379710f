#pragma once
// Test helper: runs a session to the end and keeps everything it reported.
#include "nanscope/session.h"

#include <mutex>
#include <vector>

struct RunCollector final : nanscope::RunObserver {
    std::mutex mutex;
    std::vector<nanscope::Layer> layers;
    std::vector<nanscope::StepRecordPtr> records;
    std::vector<nanscope::StepChunkPtr> chunks;  // from a recorded run played in chunks
    std::vector<nanscope::Event> events;
    std::vector<nanscope::SessionState> states;
    nanscope::RunSummary summary;
    bool finished = false;

    void runStarted(int, const std::vector<nanscope::Layer> &l, const nanscope::RunConfig &) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        layers = l;
    }
    void stepRecorded(const nanscope::StepRecordPtr &r) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        records.push_back(r);
    }
    void stepsChunked(const nanscope::StepChunkPtr &c) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        chunks.push_back(c);
    }
    void eventRaised(const nanscope::Event &e) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        events.push_back(e);
    }
    void stateChanged(nanscope::SessionState s) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        states.push_back(s);
    }
    void runFinished(const nanscope::RunSummary &s) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        summary = s;
        finished = true;
    }
    int layerId(const std::string &path) const
    {
        for (const auto &l : layers)
            if (l.path == path)
                return l.id;
        return -1;
    }
};

// A run that hung or never reported its end carries an error, so that no check of an empty
// summary ("no non-finite step") passes for a run that did not happen.
inline void noteUnfinished(RunCollector &c, bool ended)
{
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!ended && c.summary.error.empty())
        c.summary.error = "the run did not end within 300 s";
    else if (!c.finished && c.summary.error.empty())
        c.summary.error = "the run never reported its end";
}

// Runs `config` to completion on a fresh session.
#include <memory>
inline std::unique_ptr<RunCollector> runToEnd(const nanscope::RunConfig &config)
{
    auto c = std::make_unique<RunCollector>();
    nanscope::Session session;
    session.addObserver(c.get());
    std::string error;
    if (session.start(config, &error))
        noteUnfinished(*c, session.wait(300000));
    else
        c->summary.error = error;
    session.removeObserver(c.get());
    return c;
}
