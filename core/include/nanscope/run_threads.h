#pragma once
// The intra-op threads every run computes with. One: the demos' and most user models' steps are
// small enough that threads cost more than they give, and a reduction's order -- so its last bits
// -- stays the same on every machine. Run files say it (config.threads), so `diff` can tell a run
// computed otherwise (a Python loop with torch's default threads).

namespace nanscope {

constexpr int kRunThreads = 1;

}  // namespace nanscope
