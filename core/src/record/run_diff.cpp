// The steps half of a run diff: both files streamed in batches, steps matched by number.
#include "nanscope/run_diff.h"

#include "nanscope/health_compare.h"
#include "nanscope/run_file.h"
#include "record/run_diff_settings.h"

#include <deque>
#include <map>

namespace nanscope {

namespace {

constexpr int kBatch = 256;  // steps read from each file at a time

// The layers both runs have, by path: A's id and B's id, in A's (model) order.
struct SharedLayers {
    std::vector<std::pair<int, int>> ids;
    std::vector<int> parentOf;  // per entry of ids: the entry of its nearest shared ancestor, -1
};

SharedLayers shareLayers(const std::vector<Layer> &a, const std::vector<Layer> &b, RunDiff &d)
{
    std::map<std::string, int> inB;
    for (const Layer &l : b)
        inB[l.path] = l.id;
    SharedLayers shared;
    std::map<int, int> entryOfA;  // A id -> entry
    for (const Layer &l : a) {
        const auto it = inB.find(l.path);
        if (it == inB.end()) {
            d.layersOnlyInA.push_back(l.path);
            continue;
        }
        int parent = -1;
        for (int p = l.parent; p >= 0 && parent < 0; p = a[std::size_t(p)].parent)
            if (const auto e = entryOfA.find(p); e != entryOfA.end())
                parent = e->second;
        entryOfA[l.id] = int(shared.ids.size());
        shared.ids.emplace_back(l.id, it->second);
        shared.parentOf.push_back(parent);
        inB.erase(it);
    }
    for (const Layer &l : b)
        if (inB.count(l.path))
            d.layersOnlyInB.push_back(l.path);
    return shared;
}

const TensorHealth *healthOf(const StepRecord &r, int layer, const HealthKindInfo &k)
{
    static const TensorHealth none;
    return layer >= 0 && std::size_t(layer) < r.layers.size() ? &(r.layers[std::size_t(layer)].*k.member) : &none;
}

class StepMatcher {
public:
    StepMatcher(const RunFile &a, const RunFile &b, double tolerance, RunDiff &d)
        : a_(a), tolerance_(tolerance), d_(d), shared_(shareLayers(a.layers(), b.layers(), d))
    {
    }

    void compare(const StepRecord &a, const StepRecord &b)
    {
        ++d_.stepsCompared;
        // A step one file kept no layer detail of (docs/run-file.md, "Layer detail") is compared by
        // its own row alone: its input and loss.
        const bool withLayers = a.layerDetail != LayerDetail::None && b.layerDetail != LayerDetail::None;
        for (const HealthKindInfo &k : kHealthKinds) {
            std::vector<bool> &differs = differing_[std::size_t(k.kind)];  // reused step after step
            differs.assign(shared_.ids.size(), false);
            for (std::size_t e = 0; e < shared_.ids.size(); ++e) {
                differs[e] = withLayers && !sameHealth(*healthOf(a, shared_.ids[e].first, k),
                                                       *healthOf(b, shared_.ids[e].second, k), tolerance_);
                if (differs[e])
                    d_.identicalThroughout[std::size_t(k.kind)] = false;
            }
        }
        if (d_.parting.step < 0)
            d_.parting = partingAt(a, b);
    }

private:
    // The entry to name among those whose `kind` differs. For the forward pass, a layer whose own
    // parameters differ too comes first (different weights explain every difference after them,
    // also in a layer called again later, whose health folds its calls together). Otherwise one
    // none of whose descendants differs too (the root differs whenever any layer does): the first
    // in model order, or for the gradients flowing back the last (backward meets it first).
    int chosen(HealthKind kind) const
    {
        const std::vector<bool> &differs = differing_[std::size_t(kind)];
        if (kind == HealthKind::Forward)
            for (std::size_t e = 0; e < differs.size(); ++e)
                if (differs[e] && differing_[std::size_t(HealthKind::Params)][e])
                    return int(e);
        std::vector<bool> hasDifferingDescendant(differs.size(), false);
        for (std::size_t e = 0; e < differs.size(); ++e)
            if (differs[e])
                for (int p = shared_.parentOf[e]; p >= 0; p = shared_.parentOf[std::size_t(p)])
                    hasDifferingDescendant[std::size_t(p)] = true;
        int pick = -1;
        for (std::size_t e = 0; e < differs.size(); ++e)
            if (differs[e] && !hasDifferingDescendant[e] && (pick < 0 || kind == HealthKind::Grad))
                pick = int(e);
        return pick;
    }

    // In the order values are computed: the forward pass (different inputs show first in the
    // layers that take them), the loss, the gradients flowing back, the parameters' gradients,
    // then the parameters themselves (which differ when an earlier update did, and show first in
    // the forward pass they feed).
    RunParting partingAt(const StepRecord &a, const StepRecord &b) const
    {
        const bool inputDiffers = !sameHealth(a.inputHealth, b.inputHealth, tolerance_);
        auto inLayer = [&](HealthKind kind) {
            RunParting p;
            const int e = chosen(kind);
            if (e < 0)
                return p;
            const HealthKindInfo &k = healthKindInfo(kind);
            const auto [layerA, layerB] = shared_.ids[std::size_t(e)];
            p = {a.step, k.id, a_.layers()[std::size_t(layerA)].path,
                 healthDifference(*healthOf(a, layerA, k), *healthOf(b, layerB, k), tolerance_),
                 differing_[std::size_t(HealthKind::Params)][std::size_t(e)], inputDiffers};
            return p;
        };
        if (RunParting p = inLayer(HealthKind::Forward); p.step >= 0)
            return p;
        if (!sameHealth(a.lossHealth, b.lossHealth, tolerance_))
            return {a.step, "loss", "", healthDifference(a.lossHealth, b.lossHealth, tolerance_), false, inputDiffers};
        for (const HealthKind kind : {HealthKind::Grad, HealthKind::ParamGrads, HealthKind::Params})
            if (RunParting p = inLayer(kind); p.step >= 0)
                return p;
        if (inputDiffers)
            return {a.step, "input", "", healthDifference(a.inputHealth, b.inputHealth, tolerance_), false, true};
        return {};
    }

    const RunFile &a_;
    double tolerance_;
    RunDiff &d_;
    SharedLayers shared_;
    std::array<std::vector<bool>, 4> differing_;
};

// The next step of one file, read `kBatch` at a time.
class StepStream {
public:
    explicit StepStream(const RunFile &file) : file_(file) {}

    const StepRecord *peek()
    {
        if (queue_.empty() && !ended_) {
            const std::vector<StepRecordPtr> batch = file_.readSteps(after_, kBatch);
            ended_ = batch.empty();
            if (!ended_)
                after_ = batch.back()->step;
            queue_.insert(queue_.end(), batch.begin(), batch.end());
        }
        return queue_.empty() ? nullptr : queue_.front().get();
    }

    // Drops the step peek() gave, counting it and its run's first failed step.
    StepRecordPtr take(std::int64_t &count, int &firstFailed)
    {
        StepRecordPtr r = std::move(queue_.front());
        queue_.pop_front();
        ++count;
        if (firstFailed < 0 && r->failed())
            firstFailed = r->step;
        return r;
    }

private:
    const RunFile &file_;
    std::deque<StepRecordPtr> queue_;
    int after_ = -1;
    bool ended_ = false;
};

Json settingValue(const std::string &text)
{
    return text == "-" ? Json() : Json::parse(text, nullptr, false);
}

}  // namespace

RunDiff diffRuns(const RunFile &a, const RunFile &b, double tolerance, const std::function<void(std::int64_t)> &progress)
{
    RunDiff d;
    d.tolerance = tolerance;
    d.settings = record::settingDifferences(a, b);
    StepMatcher matcher(a, b, tolerance, d);
    StepStream fromA(a);
    StepStream fromB(b);
    for (;;) {
        const StepRecord *nextA = fromA.peek();
        const StepRecord *nextB = fromB.peek();
        if (!nextA && !nextB)
            break;
        if (nextA && nextB && nextA->step == nextB->step) {
            const StepRecordPtr stepA = fromA.take(d.stepsA, d.firstFailedA);
            const StepRecordPtr stepB = fromB.take(d.stepsB, d.firstFailedB);
            matcher.compare(*stepA, *stepB);
        } else if (nextA && (!nextB || nextA->step < nextB->step)) {
            fromA.take(d.stepsA, d.firstFailedA);
        } else {
            fromB.take(d.stepsB, d.firstFailedB);
        }
        if (progress && (d.stepsA + d.stepsB) % (8 * kBatch) == 0)
            progress(d.stepsA + d.stepsB);
    }
    return d;
}

Json runDiffJson(const RunDiff &d, const std::string &pathA, const std::string &pathB)
{
    Json settings = Json::array();
    for (const SettingDifference &s : d.settings)
        settings.push_back({{"key", s.key}, {"a", settingValue(s.a)}, {"b", settingValue(s.b)}});
    Json parting;
    if (d.parting.step >= 0)
        parting = {{"step", d.parting.step},
                   {"what", d.parting.what},
                   {"layer", healthKindWithId(d.parting.what) ? Json(d.parting.layer) : Json()},
                   {"detail", d.parting.detail},
                   {"params_differ", d.parting.paramsDiffer},
                   {"input_differs", d.parting.inputDiffers}};
    Json throughout = Json::object();
    for (const HealthKindInfo &k : kHealthKinds)
        throughout[k.id] = d.identicalThroughout[std::size_t(k.kind)];
    auto run = [&](const std::string &path, std::int64_t steps, int failed) {
        Json apart;  // whether the runs had already parted when this one went non-finite
        if (failed >= 0)
            apart = d.parting.step >= 0 && d.parting.step <= failed;
        return Json{{"path", path},
                    {"steps", steps},
                    {"first_nonfinite_step", failed >= 0 ? Json(failed) : Json()},
                    {"apart_by_then", apart}};
    };
    return Json{{"type", "diff"},
                {"identical", d.identical()},
                {"tolerance", d.tolerance},
                {"a", run(pathA, d.stepsA, d.firstFailedA)},
                {"b", run(pathB, d.stepsB, d.firstFailedB)},
                {"settings", settings},
                {"layers_only_in_a", d.layersOnlyInA},
                {"layers_only_in_b", d.layersOnlyInB},
                {"steps_compared", d.stepsCompared},
                {"parting", parting},
                {"identical_throughout", throughout}};
}

}  // namespace nanscope
