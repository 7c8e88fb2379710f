#pragma once
// Fails the test when the thread that created it does not come back within a limit. A loop that
// never ends in the GUI thread would otherwise stall the suite until CTest's own timeout, with no
// word on what hung; the limit is generous so that a loaded machine never trips it.
#include <QtGlobal>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace nanscope::testing {

class Watchdog {
public:
    Watchdog(std::string what, std::chrono::seconds limit)
        : what_(std::move(what)), thread_([this, limit] {
              std::unique_lock<std::mutex> lock(mutex_);
              if (!done_cv_.wait_for(lock, limit, [this] { return done_; }))
                  qFatal("%s did not come back within %lld s", what_.c_str(), static_cast<long long>(limit.count()));
          })
    {
    }
    ~Watchdog()
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        done_cv_.notify_all();
        thread_.join();
    }
    Watchdog(const Watchdog &) = delete;
    Watchdog &operator=(const Watchdog &) = delete;

private:
    std::string what_;
    std::mutex mutex_;
    std::condition_variable done_cv_;
    bool done_ = false;
    std::thread thread_;  // last: it starts once the members it reads exist
};

}  // namespace nanscope::testing
