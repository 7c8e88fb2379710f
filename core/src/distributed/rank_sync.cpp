#include "distributed/rank_sync.h"

#include "health/lane_sum.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace nanscope {

namespace {

// Gradients travel in buckets of about this many bytes, as DistributedDataParallel's do.
constexpr std::int64_t kBucketBytes = 25 << 20;

constexpr std::int64_t kHead = 4;  // failed, phase, layer, loss

// Sums `flat` (1-d tensors of one dtype, on the collectives' device) over the ranks in buckets, returned summed;
// nothing is copied back yet (spread() does, once the ranks' findings say by how much to divide).
std::vector<SummedBucket> allReduceInBuckets(RankGroup &group, const std::vector<at::Tensor> &flat)
{
    std::vector<SummedBucket> buckets;
    std::size_t i = 0;
    while (i < flat.size()) {
        std::size_t bytes = 0, j = i;
        std::vector<at::Tensor> bucket;
        while (j < flat.size() && (bucket.empty() || bytes + flat[j].nbytes() <= std::size_t(kBucketBytes))) {
            bytes += flat[j].nbytes();
            bucket.push_back(flat[j++]);
        }
        std::vector<at::Tensor> one{at::cat(bucket)};
        group.allReduceSum(one);
        buckets.push_back({one[0], i, j});
        i = j;
    }
    return buckets;
}

// Copies n summed values into `to`, divided by `ranks`, and returns the sum of their squares: the
// division, the norm and the copy back in one pass over memory.
template <typename T> double divideInto(T *to, const T *summed, std::int64_t n, int ranks)
{
    return sumInLanes<T>(n, [to, summed, ranks](std::int64_t i) {
        const T v = ranks > 1 ? summed[i] / T(ranks) : summed[i];
        to[i] = v;
        return v * v;
    });
}

// Whether `flat`'s entries [first, last) can take their share of `sum` in place on the host.
bool onHost(const at::Tensor &sum, const std::vector<at::Tensor> &flat, std::size_t first, std::size_t last)
{
    if (!sum.device().is_cpu() || !sum.is_contiguous() ||
        (sum.scalar_type() != at::kFloat && sum.scalar_type() != at::kDouble))
        return false;
    for (std::size_t k = first; k < last; ++k)
        if (flat[k].scalar_type() != sum.scalar_type() || !flat[k].device().is_cpu() || !flat[k].is_contiguous())
            return false;
    return true;
}

// Copies each bucket's sums back into `flat`, divided by `ranks` (flat entries before
// `firstGradient` are not gradients: the ranks' table, copied as summed), as
// DistributedDataParallel divides a bucket. Returns the norm of what was divided, or 0 without
// `norm`. With a norm to take, CPU buckets of floats or doubles (Gloo's) take one pass on the host;
// any other bucket, and a plain loop's (no norm), one op a bucket as DistributedDataParallel's
// comm hook divides it, then a copy back a gradient.
double spread(const std::vector<SummedBucket> &buckets, std::vector<at::Tensor> &flat, std::size_t firstGradient,
              int ranks, bool norm)
{
    std::vector<at::Tensor> norms;
    double hostSquares = 0;
    for (const SummedBucket &b : buckets) {
        if (norm && onHost(b.sum, flat, b.first, b.last)) {
            std::int64_t offset = 0;
            for (std::size_t k = b.first; k < b.last; ++k) {
                const std::int64_t n = flat[k].numel();
                if (k < firstGradient)
                    flat[k].copy_(b.sum.narrow(0, offset, n));
                else if (b.sum.scalar_type() == at::kFloat)
                    hostSquares += divideInto(flat[k].data_ptr<float>(), b.sum.data_ptr<float>() + offset, n, ranks);
                else
                    hostSquares += divideInto(flat[k].data_ptr<double>(), b.sum.data_ptr<double>() + offset, n, ranks);
                offset += n;
            }
            continue;
        }
        std::int64_t from = 0;
        for (std::size_t k = b.first; k < b.last && k < firstGradient; ++k)
            from += flat[k].numel();
        at::Tensor gradients = b.sum.narrow(0, from, b.sum.numel() - from);
        if (ranks > 1)
            gradients.div_(double(ranks));
        if (norm && gradients.numel() > 0)
            norms.push_back(gradients.norm().to(at::kDouble));
        std::int64_t offset = 0;
        for (std::size_t k = b.first; k < b.last; ++k) {
            flat[k].copy_(b.sum.narrow(0, offset, flat[k].numel()));
            offset += flat[k].numel();
        }
    }
    if (!norm)
        return 0.0;
    // One host read for the whole norm (a device sync on a GPU).
    const double device = norms.empty() ? 0.0 : at::stack(norms).norm().item<double>();
    return std::sqrt(hostSquares + device * device);
}

// One dtype travels: float, or double when a gradient is double.
at::ScalarType wireType(const std::vector<at::Tensor> &params)
{
    for (const at::Tensor &p : params)
        if (p.scalar_type() == at::kDouble)
            return at::kDouble;
    return at::kFloat;
}

RankSync::Gradients flatGradients(ModelAdapter &model, bool zero, c10::Device device)
{
    RankSync::Gradients g;
    g.params = model.parameters();
    const at::ScalarType type = wireType(g.params);
    for (at::Tensor &p : g.params) {
        if (!p.grad().defined())
            p.mutable_grad() = at::zeros_like(p);
        at::Tensor f = p.grad().detach().reshape({-1}).to(device, type).contiguous();
        if (zero)
            f = at::zeros_like(f);  // never a view of the gradient: its NaN stays out
        g.flat.push_back(f);
    }
    return g;
}

void putBack(RankSync::Gradients &g)
{
    for (std::size_t i = 0; i < g.params.size(); ++i) {
        at::Tensor dst = g.params[i].mutable_grad();
        if (dst.data_ptr() != g.flat[i].data_ptr())  // not already the gradient's own storage
            dst.copy_(g.flat[i].view(dst.sizes()));
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
        std::vector<at::Tensor> one{t.to(group_.device()).contiguous()};  // t itself on the CPU with Gloo
        group_.broadcast(one, 0);
        if (!one[0].is_same(t))
            t.copy_(one[0]);
    }
}

RankFindings RankSync::exchange(const StepRecord &local, ModelAdapter &model, std::size_t layers)
{
    at::NoGradGuard noGrad;
    discardPending();  // a skipped step's sums: not to be held twice, nor divided by mistake
    const std::int64_t width = kHead + std::int64_t(layers);
    // The table rides in front of the gradients, as floats: counts are exact to 2^24 values a
    // layer, beyond which they only need to stay non-zero.
    Gradients g = flatGradients(model, local.failed(), group_.device());
    // Filled on the host, then one copy: a tensor op per layer would cost a dispatch each, every step.
    std::vector<double> row(std::size_t(width), 0.0);
    row[0] = local.failed() ? 1.0 : 0.0;
    row[1] = double(int(local.origin.phase));
    row[2] = double(local.origin.layer);
    row[3] = std::isfinite(local.loss) ? local.loss : 0.0;  // a bad rank's loss is not averaged; NaN stays off the wire
    for (std::size_t l = 0; l < layers && l < local.layers.size(); ++l) {
        const LayerHealth &h = local.layers[l];
        row[std::size_t(kHead) + l] = double(h.forward.nonFinite() + h.grad.nonFinite() + h.paramGrads.nonFinite());
    }
    at::Tensor table = at::zeros({world() * width}, g.flat.empty() ? at::kFloat : g.flat[0].scalar_type());
    if (table.scalar_type() == at::kFloat)
        std::copy(row.begin(), row.end(), table.data_ptr<float>() + rank() * width);
    else
        std::copy(row.begin(), row.end(), table.data_ptr<double>() + rank() * width);
    std::vector<at::Tensor> flat{table.to(group_.device())};
    flat.insert(flat.end(), g.flat.begin(), g.flat.end());
    pendingBuckets_ = allReduceInBuckets(group_, flat);
    g.flat = std::move(flat);  // the table first, then the gradients
    pending_ = std::move(g);

    // The summed table heads the first bucket, of the table's dtype; read on the host (NCCL's on
    // the GPU: one copy, which waits for the all-reduce).
    const at::Tensor summed = pendingBuckets_.front().sum.narrow(0, 0, table.numel()).to(at::kCPU).contiguous();
    std::vector<double> all(std::size_t(table.numel()));
    if (summed.scalar_type() == at::kFloat)
        std::copy_n(summed.data_ptr<float>(), all.size(), all.begin());
    else
        std::copy_n(summed.data_ptr<double>(), all.size(), all.begin());
    const double *v = all.data();
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

void RankSync::sumGradients(ModelAdapter &model, int ranks)
{
    at::NoGradGuard noGrad;
    Gradients g = flatGradients(model, false, group_.device());
    spread(allReduceInBuckets(group_, g.flat), g.flat, 0, ranks, false);
    putBack(g);
}

void RankSync::discardPending()
{
    pending_ = {};
    pendingBuckets_.clear();
}

double RankSync::divideGradients(int ranks)
{
    if (pendingBuckets_.empty())
        throw std::logic_error("divideGradients() without an exchange() before it");
    at::NoGradGuard noGrad;
    const double norm = spread(pendingBuckets_, pending_.flat, 1, ranks, true);
    pending_.flat.erase(pending_.flat.begin());  // the table
    putBack(pending_);
    pending_ = {};
    pendingBuckets_.clear();
    return norm;
}

void RankSync::shareBuffers(ModelAdapter &model, int root)
{
    at::NoGradGuard noGrad;
    // One broadcast per dtype (float statistics, integer counters), as DistributedDataParallel
    // coalesces its buffers.
    std::map<at::ScalarType, std::vector<at::Tensor>> byType;
    for (const at::Tensor &b : model.buffers())
        byType[b.scalar_type()].push_back(b);
    for (auto &[type, buffers] : byType) {
        std::vector<at::Tensor> flat;
        for (const at::Tensor &b : buffers)
            flat.push_back(b.reshape({-1}).to(group_.device()));
        std::vector<at::Tensor> one{at::cat(flat)};
        group_.broadcast(one, root);
        std::int64_t at = 0;
        for (at::Tensor b : buffers) {
            b.copy_(one[0].narrow(0, at, b.numel()).view(b.sizes()));
            at += b.numel();
        }
    }
}

RankDivergence RankSync::compareParameters(ModelAdapter &model)
{
    // Per layer, two sums of its parameters: one flipped bit changes them. Ranks that applied the
    // same updates to the same values agree exactly.
    const std::size_t layers = model.layers().size();
    // Summed where the collectives take their tensors (a GPU's parameters stay there with NCCL),
    // then read once.
    const at::TensorOptions wire = at::TensorOptions().dtype(at::kDouble).device(group_.device());
    at::Tensor table = at::zeros({world(), std::int64_t(layers), 2}, wire);
    for (std::size_t l = 0; l < layers; ++l)
        for (const at::Tensor &p : model.layerParameters(int(l))) {
            const at::Tensor d = p.detach().to(wire);
            table[rank()][std::int64_t(l)][0] += d.sum();
            table[rank()][std::int64_t(l)][1] += d.abs().sum();
        }
    std::vector<at::Tensor> one{table};
    group_.allReduceSum(one);
    const at::Tensor all = one[0].to(at::kCPU).nan_to_num(1.5e308, 1.6e308, -1.6e308);  // NaN equals NaN here
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
