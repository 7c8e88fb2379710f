#pragma once
// Which collectives a job uses, decided by every rank alike from what each rank offered at the
// rendezvous. Plain values only: the rule is tested without processes or GPUs.
#include <string>
#include <vector>

namespace nanscope {

// What one rank asks for and can do.
struct CollectivesOffer {
    std::string backend;  // --backend as asked: "auto", "gloo" or "nccl"
    std::string host;
    std::string gpu;  // its GPU as NCCL tells GPUs apart (a PCI address); empty: it cannot use NCCL
    std::string why;  // why not, where gpu is empty

    // The store's value: backend, GPU and reason, one a line (the host travels under its own key).
    std::string encoded() const;
    static CollectivesOffer decoded(const std::string &text, const std::string &host);
};

// True for NCCL, false for Gloo: NCCL when every rank asked for it (or for auto) and each has a GPU
// of its own. Throws RankGroupError, naming the ranks, when they asked for different backends, or
// for NCCL where one cannot use it.
bool chooseNccl(const std::vector<CollectivesOffer> &offers);

}  // namespace nanscope
