#include "distributed/collectives_choice.h"

#include "distributed/rank_group.h"
#include "nanscope/run_config.h"

namespace nanscope {

std::string CollectivesOffer::encoded() const { return backend + "\n" + gpu + "\n" + why; }

CollectivesOffer CollectivesOffer::decoded(const std::string &text, const std::string &host)
{
    const auto first = text.find('\n');
    const auto second = first == std::string::npos ? std::string::npos : text.find('\n', first + 1);
    CollectivesOffer o;
    o.backend = text.substr(0, first);
    o.host = host;
    if (second != std::string::npos) {
        o.gpu = text.substr(first + 1, second - first - 1);
        o.why = text.substr(second + 1);
    }
    return o;
}

bool chooseNccl(const std::vector<CollectivesOffer> &offers)
{
    if (offers.empty())
        return false;
    const std::string &asked = offers[0].backend;
    for (std::size_t r = 1; r < offers.size(); ++r)
        if (offers[r].backend != asked)
            throw RankGroupError("the ranks asked for different collectives: rank 0 --backend " + asked + ", rank " +
                                 std::to_string(r) + " --backend " + offers[r].backend);
    if (asked == collectiveBackendName(CollectiveBackend::Gloo))
        return false;
    const bool required = asked == collectiveBackendName(CollectiveBackend::Nccl);
    for (std::size_t r = 0; r < offers.size(); ++r) {
        if (!offers[r].gpu.empty())
            continue;
        if (required)
            throw RankGroupError("--backend nccl: rank " + std::to_string(r) + " cannot use NCCL: " + offers[r].why);
        return false;
    }
    for (std::size_t r = 0; r < offers.size(); ++r)
        for (std::size_t o = r + 1; o < offers.size(); ++o) {
            if (offers[r].host != offers[o].host || offers[r].gpu != offers[o].gpu)
                continue;
            if (required)
                throw RankGroupError("--backend nccl: ranks " + std::to_string(r) + " and " + std::to_string(o) +
                                     " share the GPU " + offers[r].gpu + " on " + offers[r].host +
                                     ", and NCCL needs a GPU per rank");
            return false;
        }
    return true;
}

}  // namespace nanscope
