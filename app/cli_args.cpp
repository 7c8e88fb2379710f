#include "cli_args.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace nanscope::cli {

struct Arguments::Entry {
    std::string name;
    CLI::Option *option;
    ValueUse use;
    bool every;  // each value, or only the last
};

Arguments::Arguments(std::string command) : command_(std::move(command)), app_(std::make_unique<CLI::App>())
{
    // Unknown arguments are collected rather than thrown, so that the message can name one.
    app_->allow_extras();
    // parse() answers -h/--help itself, wherever they stand (see there).
    app_->set_help_flag();
    // Keep every value as given; parse() decides which count (the last, or each for repeatable).
    app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

Arguments::~Arguments() = default;

Arguments &Arguments::add(const std::string &name, CLI::Option *option, ValueUse use, bool every)
{
    entries_.push_back({name, option, std::move(use), every});
    return *this;
}

Arguments &Arguments::option(const std::string &name, ValueUse use)
{
    return add(name, app_->add_option(name), std::move(use), false);
}

Arguments &Arguments::repeatable(const std::string &name, ValueUse use)
{
    return add(name, app_->add_option(name), std::move(use), true);
}

Arguments &Arguments::flag(const std::string &name, bool &set)
{
    // CLI11 records a bare flag as "true"; `--json=no` would otherwise be read as set.
    return add(
        name, app_->add_flag(name),
        [&set](const std::string &flag, const std::string &value) {
            if (value != "true")
                throw std::invalid_argument(flag + " takes no value");
            set = true;
        },
        false);
}

Arguments &Arguments::positional(const std::string &name, ValueUse use)
{
    return add(name, app_->add_option(name), std::move(use), false);
}

void Arguments::parse(const std::vector<std::string> &args)
{
    const std::vector<std::string> given(args.begin() + std::min<std::size_t>(1, args.size()), args.end());
    // Whoever writes -h or --help is asking how to write the line, so it wins over anything wrong
    // next to it, even where CLI11 would take it for a missing value (`run --scenario -h`).
    if (std::any_of(given.begin(), given.end(), [](const std::string &a) { return a == "-h" || a == "--help"; }))
        throw HelpRequested{};
    // CLI11 reads the arguments from the back of the vector.
    std::vector<std::string> reversed(given.rbegin(), given.rend());
    try {
        app_->parse(reversed);
    } catch (const CLI::ArgumentMismatch &e) {
        // CLI11 throws this when the arguments run out while an option still wants its value:
        // that option is then the last argument.
        const std::string last = given.empty() ? std::string() : given.back().substr(0, given.back().find('='));
        for (const Entry &entry : entries_)
            if (entry.name == last)
                throw std::invalid_argument(last + " needs a value");
        throw std::invalid_argument(command_ + ": " + e.what());
    } catch (const CLI::ParseError &e) {
        throw std::invalid_argument(command_ + ": " + e.what());
    }
    const std::vector<std::string> unknown = app_->remaining();
    if (!unknown.empty())
        throw std::invalid_argument(command_ + ": unknown argument '" + unknown.front() + "'");
    for (const Entry &entry : entries_) {
        const std::vector<std::string> &values = entry.option->results();
        if (values.empty())
            continue;
        if (!entry.every) {
            entry.use(entry.name, values.back());
            continue;
        }
        for (const std::string &value : values)
            entry.use(entry.name, value);
    }
}

int parseInt(const std::string &flag, const std::string &value, int min)
{
    char *end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < min || n > 100000000)
        throw std::invalid_argument(flag + " expects an integer >= " + std::to_string(min) + ", got '" + value + "'");
    return int(n);
}

double parseNumber(const std::string &flag, const std::string &value)
{
    char *end = nullptr;
    const double d = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(d))
        throw std::invalid_argument(flag + " expects a finite number, got '" + value + "'");
    return d;
}

std::optional<double> parsePositiveOrOff(const std::string &flag, const std::string &value)
{
    if (value == "off")
        return std::nullopt;
    const double d = parseNumber(flag, value);
    if (d <= 0)
        throw std::invalid_argument(flag + " must be positive or 'off'");
    return d;
}

std::string parseDevice(const std::string &flag, const std::string &value)
{
    if (value != "cpu" && value != "cuda")
        throw std::invalid_argument(flag + " is cpu or cuda, got '" + value + "'");
    return value;
}

CollectiveBackend parseBackend(const std::string &flag, const std::string &value)
{
    const auto backend = parseCollectiveBackend(value);
    if (!backend)
        throw std::invalid_argument(flag + " is auto, gloo or nccl, got '" + value + "'");
    return *backend;
}

}  // namespace nanscope::cli
