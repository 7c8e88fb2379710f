#pragma once
// A capsule: everything needed to compute one step of a run again, anywhere (`nanscope replay`).
// The session makes one of the first step that turns non-finite and of each step the user asks
// for; observers receive it serialized, so no LibTorch type crosses this header. Run files keep
// capsules in their `capsules` table (docs/run-file.md), which capsule_file.h reads.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nanscope {

struct CapsuleBlob {
    int run = 0;
    int step = 0;
    std::string reason;     // "first-non-finite", "asked" or "fault"
    std::string meta;       // JSON: controls, scaler, precision, device, threads, batches (docs/run-file.md)
    std::string state;      // a LibTorch archive: parameters, buffers, optimizer state, batch tensors
    int snapshotStep = -1;  // the checked-finite state it also keeps, -1 when none
};
using CapsulePtr = std::shared_ptr<const CapsuleBlob>;

// A capsule as a run file lists it.
struct CapsuleEntry {
    int step = 0;
    std::string reason;
    int snapshotStep = -1;
    std::int64_t bytes = 0;
    std::string modelSha256;  // a model run's embedded model file, empty for a scenario
};

// "first-non-finite", "asked", "fault"
constexpr const char *kCapsuleFirstNonFinite = "first-non-finite";
constexpr const char *kCapsuleAsked = "asked";
constexpr const char *kCapsuleFault = "fault";

}  // namespace nanscope
