#pragma once
// A run whose data its owner pushes: the GUI benchmark's synthetic runs and the tests' scripted
// ones reach the window exactly as a live session's do, through RunObserver. It takes no
// commands: its capabilities are none.
#include "nanscope/observer_list.h"
#include "nanscope/run_source.h"

#include <mutex>

namespace nanscope {

class PushedRunSource final : public RunSource {
public:
    void addObserver(RunObserver *observer) override { observers_.add(observer); }
    void removeObserver(RunObserver *observer) override { observers_.remove(observer); }
    RunCapabilities capabilities() const override { return RunCapabilities::none(); }

    bool start(const RunConfig &config, std::string *error = nullptr) override;
    void pause() override {}
    void resume() override {}
    void stepOnce(int) override {}
    void stop() override {}
    void requestRollback() override {}
    void decidePausedStep(PausedStepDecision) override {}
    void setControls(const Controls &) override {}

    Controls controls() const override { return {}; }
    SessionState state() const override;
    int runId() const override;
    bool wait(int) override { return true; }  // nothing runs in the background

    // Any thread; each call reaches every observer before it returns.
    void beginRun(int run, const std::vector<Layer> &layers, const RunConfig &config = {});
    void pushStep(const StepRecordPtr &record);
    void pushEvent(const Event &event);
    void pushState(SessionState state);
    void finishRun(const RunSummary &summary);

private:
    ObserverList observers_;
    mutable std::mutex mutex_;  // run_ and state_
    int run_ = 0;
    SessionState state_ = SessionState::Idle;
};

}  // namespace nanscope
