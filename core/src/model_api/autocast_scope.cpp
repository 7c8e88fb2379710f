#include "model_api/autocast_scope.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace nanscope {

namespace {

// LibTorch 2.4 replaced the per-device autocast functions by ones taking the device type (the
// old names remain, deprecated, for a while).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool isEnabled(c10::DeviceType t) { return at::autocast::is_autocast_enabled(t); }
void setEnabled(c10::DeviceType t, bool on) { at::autocast::set_autocast_enabled(t, on); }
at::ScalarType dtypeOf(c10::DeviceType t) { return at::autocast::get_autocast_dtype(t); }
void setDtype(c10::DeviceType t, at::ScalarType d) { at::autocast::set_autocast_dtype(t, d); }
#else
bool isEnabled(c10::DeviceType t)
{
    return t == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void setEnabled(c10::DeviceType t, bool on)
{
    if (t == c10::DeviceType::CUDA)
        at::autocast::set_enabled(on);
    else
        at::autocast::set_cpu_enabled(on);
}
at::ScalarType dtypeOf(c10::DeviceType t)
{
    return t == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
void setDtype(c10::DeviceType t, at::ScalarType d)
{
    if (t == c10::DeviceType::CUDA)
        at::autocast::set_autocast_gpu_dtype(d);
    else
        at::autocast::set_autocast_cpu_dtype(d);
}
#endif

}  // namespace

bool emulatesHalf(Precision p, const std::string &device) { return p == Precision::FP16 && device == "cpu"; }

at::Tensor roundThroughHalf(const at::Tensor &x)
{
    if (!x.defined() || !at::isFloatingType(x.scalar_type()) || x.scalar_type() == at::kHalf)
        return x;
    return x.to(at::kHalf).to(x.scalar_type());
}

AutocastScope::AutocastScope(Precision p, const std::string &device)
{
    if (p == Precision::FP32 || emulatesHalf(p, device))
        return;
    type_ = device == "cuda" ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
    previousEnabled_ = isEnabled(type_);
    previousDtype_ = dtypeOf(type_);
    setDtype(type_, p == Precision::FP16 ? at::kHalf : at::kBFloat16);
    setEnabled(type_, true);
    at::autocast::increment_nesting();
    active_ = true;
}

AutocastScope::~AutocastScope()
{
    if (!active_)
        return;
    // As torch.autocast's __exit__: the cast weights cached inside the outermost region go.
    if (at::autocast::decrement_nesting() == 0)
        at::autocast::clear_cache();
    setEnabled(type_, previousEnabled_);
    setDtype(type_, previousDtype_);
}

}  // namespace nanscope
