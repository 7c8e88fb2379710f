#include "distributed/rank_sync.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace nanscope {

namespace {

// Gradients travel in buckets of about this many bytes, as DistributedDataParallel's do.
constexpr std::int64_t kBucketBytes = 25 << 20;

constexpr std::int64_t kHead = 4;  // failed, phase, layer, loss

void allReduceInBuckets(RankGroup &group, std::vector<at::Tensor> &flat)
{
    std::size_t i = 0;
    while (i < flat.size()) {
        std::vector<at::Tensor> bucket;
        std::int64_t bytes = 0;
        std::size_t j = i;
        while (j < flat.size() && (bucket.empty() || bytes + flat[j].nbytes() <= std::size_t(kBucketBytes))) {
            bytes += std::int64_t(flat[j].nbytes());
            bucket.push_back(flat[j++]);
        }
        std::vector<at::Tensor> one{at::cat(bucket)};
        group.allReduceSum(one);
        std::int64_t at = 0;
        for (std::size_t k = i; k < j; ++k) {
            flat[k].copy_(one[0].narrow(0, at, flat[k].numel()));
            at += flat[k].numel();
        }
        i = j;
    }
}

}  // namespace

std::string RankFindings::text(const std::vector<Layer> &layers) const
{
    std::string out;
    for (int r : badRanks) {
        out += out.empty() ? "" : "; ";
        out += "rank " + std::to_string(r);
        if (r == rank) {
            out += std::string(" (") + phaseName(phase);
            if (layer > 0 && std::size_t(layer) < layers.size())
                out += " of " + layers[std::size_t(layer)].path;
            out += ")";
        }
    }
    return out;
}

void RankSync::startFrom(ModelAdapter &model)
{
    at::NoGradGuard noGrad;
    std::vector<at::Tensor> state = model.parameters();
    for (const at::Tensor &b : model.buffers())
        state.push_back(b);
    for (at::Tensor &t : state) {
        std::vector<at::Tensor> one{t};
        group_.broadcast(one, 0);
    }
}

RankFindings RankSync::compare(const StepRecord &local, std::size_t layers)
{
    const std::int64_t width = kHead + std::int64_t(layers);
    at::Tensor table = at::zeros({world(), width}, at::kDouble);
    auto row = table[rank()];
    row[0] = local.failed() ? 1.0 : 0.0;
    row[1] = double(int(local.origin.phase));
    row[2] = double(local.origin.layer);
    row[3] = local.loss;
    for (std::size_t l = 0; l < layers && l < local.layers.size(); ++l) {
        const LayerHealth &h = local.layers[l];
        row[kHead + std::int64_t(l)] = double(h.forward.nonFinite() + h.grad.nonFinite() + h.paramGrads.nonFinite());
    }
    std::vector<at::Tensor> one{table};
    group_.allReduceSum(one);
    const at::Tensor all = one[0].contiguous();
    const double *v = all.data_ptr<double>();
    RankFindings f;
    for (int r = 0; r < world(); ++r) {
        const double *rowOf = v + std::int64_t(r) * width;
        f.losses.push_back(rowOf[3]);
        f.nonFinite.emplace_back(rowOf + kHead, rowOf + width);
        if (rowOf[0] == 0.0)
            continue;
        f.badRanks.push_back(r);
        if (f.rank < 0) {
            f.rank = r;
            f.phase = Phase(int(rowOf[1]));
            f.layer = int(rowOf[2]);
        }
    }
    return f;
}

double RankSync::averageGradients(ModelAdapter &model, const std::vector<int> &excluded)
{
    at::NoGradGuard noGrad;
    const bool mine = std::find(excluded.begin(), excluded.end(), rank()) != excluded.end();
    const int counted = world() - int(excluded.size());
    std::vector<at::Tensor> flat;
    std::vector<at::Tensor> params = model.parameters();
    for (at::Tensor &p : params) {
        if (!p.grad().defined())
            p.mutable_grad() = at::zeros_like(p);
        at::Tensor g = p.grad().detach().reshape({-1});
        if (mine)
            g.zero_();  // its own values, NaN included, must not reach the sum
        flat.push_back(g.to(at::kCPU).contiguous());
    }
    allReduceInBuckets(group_, flat);
    double sumSq = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
        at::Tensor g = params[i].mutable_grad();
        g.copy_(flat[i].div_(double(counted)).view(g.sizes()));
        sumSq += std::pow(g.norm().item<double>(), 2);
    }
    return std::sqrt(sumSq);
}

void RankSync::shareBuffers(ModelAdapter &model, int root)
{
    at::NoGradGuard noGrad;
    for (const at::Tensor &b : model.buffers()) {
        std::vector<at::Tensor> one{b.to(at::kCPU).contiguous()};
        group_.broadcast(one, root);
        at::Tensor dst = b;
        dst.copy_(one[0]);
    }
}

RankDivergence RankSync::compareParameters(ModelAdapter &model)
{
    // Per layer, two sums of its parameters: one flipped bit changes them. Ranks that applied the
    // same updates to the same values agree exactly.
    const std::size_t layers = model.layers().size();
    at::Tensor table = at::zeros({world(), std::int64_t(layers), 2}, at::kDouble);
    for (std::size_t l = 0; l < layers; ++l)
        for (const at::Tensor &p : model.layerParameters(int(l))) {
            const at::Tensor d = p.detach().to(at::kCPU, at::kDouble);
            table[rank()][std::int64_t(l)][0] += d.sum();
            table[rank()][std::int64_t(l)][1] += d.abs().sum();
        }
    std::vector<at::Tensor> one{table};
    group_.allReduceSum(one);
    const at::Tensor all = one[0].nan_to_num(1.5e308, 1.6e308, -1.6e308);  // NaN equals NaN here
    // The majority's checksums (rank 0's on a tie), then whoever differs from them.
    int reference = 0, best = 0;
    for (int r = 0; r < world(); ++r) {
        int agree = 0;
        for (int o = 0; o < world(); ++o)
            agree += all[r].equal(all[o]) ? 1 : 0;
        if (agree > best) {
            best = agree;
            reference = r;
        }
    }
    RankDivergence d;
    for (int r = 0; r < world(); ++r) {
        if (all[r].equal(all[reference]))
            continue;
        int first = -1;
        for (std::size_t l = 0; l < layers && first < 0; ++l)
            if (!all[r][std::int64_t(l)].equal(all[reference][std::int64_t(l)]))
                first = int(l);
        d.ranks.emplace_back(r, first);
    }
    return d;
}

}  // namespace nanscope
