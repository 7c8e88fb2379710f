#include "probe/op_tracer.h"

#include "health/tensor_health.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <cstring>
#include <mutex>
#include <vector>

namespace nanscope {

namespace {

struct TraceState {
    std::mutex mutex;  // backward may run on the engine's worker threads (devices)
    TracedOp first;
    // Outputs already checked finite, with their version: an op's input is usually the output
    // of the op before, so it need not be scanned twice. Held, so no address is reused; bounded.
    std::vector<std::pair<at::Tensor, std::uint32_t>> verified;
    std::size_t next = 0;
};
constexpr std::size_t kVerifiedCapacity = 16;

// The callbacks are plain function pointers, so the active trace is reached through a global;
// only one OpTracer is active at a time (the session re-runs one step at a time).
TraceState *g_state = nullptr;
thread_local std::vector<std::pair<std::string, std::int64_t>> t_backwardNodes;  // name, sequence number
thread_local int t_opDepth = 0;  // ops nested in ops: only outermost outputs are final

bool isChecked(const at::Tensor &t) { return t.defined() && at::isFloatingType(t.scalar_type()); }

bool knownFinite(const at::Tensor &t)
{
    TraceState *s = g_state;
    if (!s)
        return false;
    std::lock_guard<std::mutex> lock(s->mutex);
    for (const auto &entry : s->verified)
        if (entry.first.is_same(t) && entry.second == t._version())
            return true;
    return false;
}

void rememberFinite(const at::Tensor &t)
{
    TraceState *s = g_state;
    if (!s)
        return;
    std::lock_guard<std::mutex> lock(s->mutex);
    if (s->verified.size() < kVerifiedCapacity)
        s->verified.emplace_back(t, t._version());
    else
        s->verified[s->next++ % kVerifiedCapacity] = {t, t._version()};
}

// Inputs may use the memo; outputs are always scanned (a kernel can write into a tensor without
// bumping its version, as addmm's GEMM does into the result its inner copy_ filled).
bool anyNonFinite(c10::ArrayRef<const c10::IValue> values, bool useMemo = false, bool remember = false)
{
    for (const c10::IValue &v : values) {
        if (v.isTensor()) {
            const at::Tensor &t = v.toTensor();
            if (!isChecked(t) || (useMemo && knownFinite(t)))
                continue;
            if (!allFinite(t))
                return true;
            if (remember)
                rememberFinite(t);
        } else if (v.isTensorList()) {
            for (const at::Tensor &t : v.toTensorList().vec())
                if (isChecked(t) && !allFinite(t))
                    return true;
        }
    }
    return false;
}

// Factory ops (empty, empty_strided) return uninitialised memory: an op only counts as the
// producer when it turned floating-point tensor inputs into its non-finite output.
bool hasFloatingInput(c10::ArrayRef<const c10::IValue> values)
{
    for (const c10::IValue &v : values) {
        if (v.isTensor() && isChecked(v.toTensor()))
            return true;
        if (v.isTensorList())
            for (const at::Tensor &t : v.toTensorList().vec())
                if (isChecked(t))
                    return true;
    }
    return false;
}

struct OpContext : at::ObserverContext {
    bool inputsFinite = true;
};

std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction &fn)
{
    at::DisableRecordFunctionGuard noReentry;  // our own checks run aten ops
    if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
        t_backwardNodes.emplace_back(fn.name(), fn.seqNr());
        return nullptr;
    }
    ++t_opDepth;
    auto ctx = std::make_unique<OpContext>();
    const char *name = fn.name();  // no std::string: this runs for every op
    if (std::strstr(name, "empty") || std::strstr(name, "resize")) {
        ctx->inputsFinite = false;  // uninitialised output by design
        return ctx;
    }
    // copy_, fill_ and zero_ overwrite their first argument: what it held (often uninitialised
    // memory from empty) is not an input, and counting it would make the verdict depend on garbage.
    c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
    if (!inputs.empty() && (std::strcmp(name, "aten::copy_") == 0 || std::strcmp(name, "aten::fill_") == 0 ||
                            std::strcmp(name, "aten::zero_") == 0))
        inputs = inputs.slice(1);
    ctx->inputsFinite = hasFloatingInput(inputs) && !anyNonFinite(inputs, /*useMemo=*/true);
    return ctx;
}

void onEnd(const at::RecordFunction &fn, at::ObserverContext *base)
{
    at::DisableRecordFunctionGuard noReentry;
    if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
        if (!t_backwardNodes.empty())
            t_backwardNodes.pop_back();
        return;
    }
    const bool outermost = --t_opDepth == 0;
    auto *ctx = static_cast<OpContext *>(base);
    if (!ctx || !ctx->inputsFinite || !g_state)
        return;
    const auto &outs = fn.outputs();
    if (!anyNonFinite(c10::ArrayRef<const c10::IValue>(outs.data(), outs.size()), false, outermost))
        return;
    std::lock_guard<std::mutex> lock(g_state->mutex);
    if (g_state->first.found)
        return;
    g_state->first.found = true;
    if (!t_backwardNodes.empty()) {
        g_state->first.op = t_backwardNodes.back().first;
        g_state->first.sequence = t_backwardNodes.back().second;
        g_state->first.innerOp = fn.name();
        g_state->first.inBackward = true;
    } else {
        g_state->first.op = fn.name();
    }
}

}  // namespace

struct OpTracer::Impl {
    TraceState state;
    at::CallbackHandle handle = 0;
};

OpTracer::OpTracer() : d(std::make_unique<Impl>())
{
    g_state = &d->state;
    t_backwardNodes.clear();
    t_opDepth = 0;
    d->handle =
        at::addThreadLocalCallback(at::RecordFunctionCallback(&onStart, &onEnd)
                                       .needsInputs(true)
                                       .needsOutputs(true)
                                       .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

OpTracer::~OpTracer()
{
    at::removeCallback(d->handle);
    g_state = nullptr;
    t_backwardNodes.clear();
}

TracedOp OpTracer::result() const
{
    std::lock_guard<std::mutex> lock(d->state.mutex);
    return d->state.first;
}

}  // namespace nanscope
