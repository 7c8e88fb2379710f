#include "nanscope/steer_request.h"

#include "nanscope/run_file.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <unistd.h>

namespace nanscope {

namespace {

constexpr int kRequestFormat = 1;  // steering.py's REQUEST_FORMAT

std::string newRequestId()
{
    std::random_device random;
    char id[9];
    std::snprintf(id, sizeof id, "%08x", unsigned(random()));
    return id;
}

}  // namespace

std::string steerableRunId(const RunFileInfo &info, const std::string &path)
{
    const nlohmann::json config = nlohmann::json::parse(info.configText, nullptr, false);
    const nlohmann::json recorder = config.is_object() ? config.value("recorder", nlohmann::json()) : nlohmann::json();
    if (!recorder.is_object() || recorder.value("kind", "") != "python")
        throw RunFileError(path + " was not written by a Python loop (nanscope.record): a run that NaNScope trains "
                                  "is steered in its window");
    const nlohmann::json id = recorder.value("run_id", nlohmann::json());
    if (!recorder.value("steerable", false) || !id.is_string())
        throw RunFileError(path + "'s loop does not read requests (recorded with steer=False, or by an older "
                                  "nanscope.record)");
    return id.get<std::string>();
}

std::string sendSteerRequest(const std::string &path, const std::string &runId, const SteerRequest &r)
{
    const std::string id = newRequestId();
    nlohmann::json request{{"format", kRequestFormat}, {"run", runId}, {"id", id}};
    if (r.learningRate)
        request["lr"] = *r.learningRate;
    if (r.setClip)
        request["clip"] = r.clip ? nlohmann::json(*r.clip) : nlohmann::json("off");
    if (!r.policy.empty())
        request["policy"] = r.policy;
    if (!r.decide.empty())
        request["decide"] = r.decide;
    if (r.atStep)
        request["at_step"] = *r.atStep;
    const std::string line = request.dump() + "\n";
    const std::string file = path + ".steer";
    // Never created here: the loop makes it, with the run file's permissions, when it starts.
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        throw RunFileError("no loop reads requests: " + file + ": " + std::strerror(errno));
    const ssize_t written = ::write(fd, line.data(), line.size());  // one write: lines never interleave
    const int error = errno;
    ::close(fd);
    if (written != ssize_t(line.size()))
        throw RunFileError("cannot write " + file + ": " + std::strerror(error));
    return id;
}

SteerAnswer steerAnswer(const Event &e, const std::string &id)
{
    if (e.message.args.empty() || e.message.args.back() != id)
        return SteerAnswer::None;
    if (e.message.id == "steer-refused")
        return SteerAnswer::Refused;
    if (e.message.id == "steer-applied")
        return SteerAnswer::Applied;
    if (e.message.id == "pause-decided")
        return SteerAnswer::Decided;
    return SteerAnswer::None;
}

std::string nonFinitePolicyFor(const Controls &c)
{
    if (c.pauseOnNonFinite)
        return "pause";
    if (c.recovery.rollbackOnNonFiniteLoss)
        return "rollback";
    return c.recovery.any() ? "skip" : "record";
}

}  // namespace nanscope
