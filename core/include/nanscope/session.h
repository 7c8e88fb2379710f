#pragma once
// A training session on one worker thread: the RunSource that trains. The GUI and the command
// line are two observers of it. No LibTorch header is included here.
#include "nanscope/run_source.h"

#include <memory>

namespace nanscope {

class Session final : public RunSource {
public:
    Session();
    ~Session() override;  // stops the worker and joins it
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    void addObserver(RunObserver *observer) override;
    void removeObserver(RunObserver *observer) override;
    RunCapabilities capabilities() const override { return RunCapabilities::all(); }

    bool start(const RunConfig &config, std::string *error = nullptr) override;
    void pause() override;
    void resume() override;
    void stepOnce(int count = 1) override;
    void stop() override;
    void requestRollback() override;
    bool requestCapsule() override;
    void decidePausedStep(PausedStepDecision decision) override;
    void setControls(const Controls &controls) override;

    Controls controls() const override;
    SessionState state() const override;
    int runId() const override;
    bool wait(int timeoutMs = -1) override;
    // Whether the worker waits at a step boundary (paused, or with its steps given out): every
    // step it computed has been handed to the observers. Turns true shortly after pause().
    bool waitingAtStepBoundary() const override;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

}  // namespace nanscope
