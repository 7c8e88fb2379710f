#pragma once
// The observers of a RunSource that calls them itself (a pushed run, a recorded run): added and
// removed from any thread, called under the list's lock, so a call and a removal never cross.
#include "nanscope/run_source.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace nanscope {

class ObserverList {
public:
    void add(RunObserver *observer)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        observers_.push_back(observer);
    }
    void remove(RunObserver *observer)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
    }
    template <typename F> void forEach(F &&f) const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (RunObserver *o : observers_)
            f(*o);
    }

private:
    mutable std::mutex mutex_;
    std::vector<RunObserver *> observers_;
};

}  // namespace nanscope
