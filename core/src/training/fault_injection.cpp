#include "training/fault_injection.h"

#include "model_api/model_adapter.h"

#include <ATen/ATen.h>

#include <cstring>
#include <sstream>
#include <stdexcept>

namespace nanscope {

at::Tensor faultWeight(const ModelAdapter &model, const std::string &layerPath)
{
    const std::vector<Layer> &layers = model.layers();
    std::string withWeights;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        for (const at::Tensor &p : model.layerParameters(int(i))) {
            if (p.scalar_type() != at::kFloat || p.numel() == 0)
                continue;
            if (layers[i].path == layerPath)
                return p;
            withWeights += (withWeights.empty() ? "" : ", ") + layers[i].path;
            break;
        }
    }
    throw std::invalid_argument("cannot inject a fault into '" + layerPath +
                                "': it is no layer with float32 weights of this model (those are: " + withWeights +
                                ")");
}

FlippedWeight flipExponentBit(const at::Tensor &weight, const std::string &name)
{
    at::NoGradGuard noGrad;
    FlippedWeight f;
    f.weight = weight;
    const at::Tensor flat = weight.detach().view(-1);
    f.index = flat.abs().argmax().item<std::int64_t>();
    f.before = flat[f.index].item<float>();
    std::uint32_t bits;
    std::memcpy(&bits, &f.before, sizeof bits);
    bits ^= 1u << 30;  // float32's highest exponent bit
    float after;
    std::memcpy(&after, &bits, sizeof after);
    flat[f.index].fill_(after);

    std::ostringstream text;
    text << name << '[';
    std::int64_t rest = f.index;
    std::vector<std::int64_t> at(std::size_t(weight.dim()));
    for (std::int64_t d = weight.dim() - 1; d >= 0; --d) {
        at[std::size_t(d)] = rest % weight.size(d);
        rest /= weight.size(d);
    }
    for (std::size_t d = 0; d < at.size(); ++d)
        text << (d ? ", " : "") << at[d];
    text << "]: " << f.before << " -> " << after << " (exponent bit 30)";
    f.text = text.str();
    return f;
}

void unflip(const FlippedWeight &flipped)
{
    if (!flipped.weight.defined())
        return;
    at::NoGradGuard noGrad;
    flipped.weight.detach().view(-1)[flipped.index].fill_(flipped.before);
}

}  // namespace nanscope
