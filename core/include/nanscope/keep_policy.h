#pragma once
// What a run file keeps of each layer's health, defined once for every writer (the C++ recorder
// here, the Python recorder through format.json). Every step keeps its own row; every layer's
// full health is kept for each step that holds a non-finite value or a warning, for the steps
// leading up to it, for the first steps of the run and around each control change; the healthy
// rest keeps it on a regular sample of steps, as the file's 64-step chunks keep every layer's
// extremes anyway (docs/run-file.md, "Layer detail").
#include <cstdint>
#include <optional>
#include <string>

namespace nanscope {

// Why a step's layer rows are in a run file (steps.layer_detail), or that they are not.
// Every: the file keeps every step (`--keep all`, and files written before the policy).
enum class LayerDetail { Every, First, NonFinite, Warning, LeadUp, Control, Capsule, Sample, None };

// "first", "nonfinite", "warning", "lead-up", "control", "capsule", "sample", "none"; "" for Every
// (NULL in a file).
const char *layerDetailId(LayerDetail detail);
LayerDetail layerDetailFromId(const std::string &id);  // "" or an unknown id: Every

struct KeepPolicy {
    static constexpr int kFirstSteps = 1024;  // kept in full: a run's start, and every short run
    static constexpr int kLeadUpSteps = 64;   // before a non-finite step, a warning or a control change
    static constexpr int kAfterControlSteps = 64;  // from a control change on
    static constexpr int kSampleEvery = 16;        // healthy steps kept in full, until the budget thins them
    static constexpr std::int64_t kDefaultBudgetBytes = std::int64_t(1536) << 20;  // `auto`: 1.5 GiB
    static constexpr std::int64_t kSmallestBudgetBytes = std::int64_t(1) << 20;

    bool keepAll = false;
    // Once the file holds more than this, sampled steps are thinned (every 32nd, 64th, ...); the
    // steps kept for a cause never are.
    std::int64_t budgetBytes = kDefaultBudgetBytes;

    static KeepPolicy all();
    bool isDefault() const { return !keepAll && budgetBytes == kDefaultBudgetBytes; }
};

// "all", "auto", or a budget: "2GiB", "500MiB", "1.5G", "800MB", a number of bytes. Units are
// powers of 1024 (GB and GiB alike). nullopt for anything else, or a budget under 1 MiB.
std::optional<KeepPolicy> parseKeepPolicy(const std::string &text);
// "all", "auto", "2GiB", "1.5GiB", "500MiB": what parseKeepPolicy reads back.
std::string keepPolicyName(const KeepPolicy &policy);

}  // namespace nanscope
