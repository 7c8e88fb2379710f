// A Python run's replay, read from its capsule. NaNScope cannot compute a step of the user's own
// loop again (that needs their model's code): nanscope.replay (Python) does, and adds its results
// to the capsule's meta ("replay", the keys of `nanscope replay --json`). Reading them here lets
// `nanscope replay` and the window's Replay this step show a Python run's replay as their own.
#include "nanscope/replay.h"

#include "nanscope/capsule_file.h"
#include "nanscope/run_file.h"
#include "nanscope/run_json.h"
#include "record/run_file_json.h"

namespace nanscope {

namespace {

using record::jsonNumber;
using record::jsonValue;

ReplayVerdict verdictFrom(const std::string &id)
{
    if (id == "reproduced")
        return ReplayVerdict::Reproduced;
    if (id == "reproduced-numerically")
        return ReplayVerdict::ReproducedNumerically;
    return ReplayVerdict::NotReproduced;
}

int chooseStep(const std::string &path, const std::vector<CapsuleEntry> &entries, int asked)
{
    if (entries.empty())
        throw RunFileError(path + ": holds no capsule: nanscope.record keeps one of the first non-finite step "
                                  "(and of the steps named by capsule_at=) when it is given the optimizer, unless "
                                  "capsules=False; this loop had none, or was recorded before capsules existed");
    return asked >= 0 ? asked : defaultCapsuleStep(entries);
}

ReplayReport reportFrom(const Json &j, const std::string &path, const std::vector<Layer> &layers)
{
    ReplayReport r;
    r.runFile = path;
    r.step = jsonValue(j, "step", -1);
    r.reason = jsonValue<std::string>(j, "capsule", "");
    r.verdict = verdictFrom(jsonValue<std::string>(j, "verdict", ""));
    r.differsWhat = jsonValue<std::string>(j, "differs", "");
    const Json recorded = j.value("recorded", Json::object()), replayed = j.value("replayed", Json::object());
    r.recordedFailed = jsonValue(recorded, "failed", false);
    r.recordedLoss = jsonNumber(recorded, "loss", 0.0);
    r.recordedGradNorm = jsonNumber(recorded, "grad_norm", 0.0);
    r.replayedFailed = jsonValue(replayed, "failed", false);
    r.replayedLoss = jsonNumber(replayed, "loss", 0.0);
    r.replayedGradNorm = jsonNumber(replayed, "grad_norm", 0.0);
    r.origin = originFrom(j.value("origin", Json()), layers);
    r.samples = jsonValue(j, "samples", std::vector<std::int64_t>{});
    r.bisectReplays = jsonValue(j, "bisect_replays", 0);
    r.coupledBy = jsonValue(j, "coupled_by", std::vector<std::string>{});
    for (const Json &w : j.value("what_if", Json::array()))
        r.whatIf.push_back({jsonValue<std::string>(w, "change", ""), jsonValue<std::string>(w, "from", "step"),
                            jsonValue(w, "finite", false), jsonValue<std::string>(w, "note", ""), {}});
    r.device = jsonValue<std::string>(j, "device", "cpu");
    r.threads = jsonValue(j, "threads", 1);
    r.notes = jsonValue(j, "notes", std::vector<std::string>{});
    r.notes.push_back("computed by nanscope.replay (Python, torch " + jsonValue<std::string>(j, "torch", "?") +
                      ") with the loop's own model code; read from the run file");
    r.replayMillis = r.totalMillis = jsonNumber(j, "replay_ms", 0.0);
    return r;
}

}  // namespace

std::optional<ReplayReport> storedReplay(const std::string &path, int step)
{
    RunFile file(path);
    if (!file.info().config.isRecordedLoop())
        return std::nullopt;
    const int chosen = chooseStep(path, runFileCapsules(path), step);
    const CapsuleBlob blob = readCapsule(path, chosen);
    const Json meta = Json::parse(blob.meta, nullptr, false);
    const auto replay = meta.is_object() ? meta.find("replay") : meta.end();
    if (replay == meta.end() || !replay->is_object())
        throw RunFileError(path + ": step " + std::to_string(chosen) +
                           "'s capsule was kept by nanscope.record and has not been replayed yet: that needs the "
                           "loop's own model code. In Python: nanscope.replay(\"" + path +
                           "\", model, optimizer, compute_loss); or: python3 -m nanscope replay " + path +
                           " --script train.py --model build_model --compute-loss compute_loss "
                           "(docs/python.md, \"Replaying the failing step\"). Its results then show here.");
    return reportFrom(*replay, path, file.layers());
}

}  // namespace nanscope
