#pragma once
// The arguments of one `nanscope` sub-command. CLI11 splits and matches them (--flag VALUE,
// --flag=VALUE, a bare file name, unknown ones); each value is converted only once the whole line
// has been read, so that --help wins over a bad value next to it, and every message is our own
// one line that names the flag. CLI11 stays inside cli_args.cpp: one translation unit pays for it.
#include "nanscope/run_config.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace nanscope::cli {

// Thrown by Arguments::parse() when -h or --help stands anywhere on the line: the caller prints
// the sub-command's synopsis and exits 0.
struct HelpRequested {};

// Receives the flag's name and one of its values; throws std::invalid_argument with a one-line
// message that names the flag when the value is wrong.
using ValueUse = std::function<void(const std::string &flag, const std::string &value)>;

class Arguments {
public:
    // `command` (e.g. "run") starts the message for an unknown argument.
    explicit Arguments(std::string command);
    ~Arguments();
    Arguments(const Arguments &) = delete;
    Arguments &operator=(const Arguments &) = delete;

    // --name VALUE; given more than once, the last one counts.
    Arguments &option(const std::string &name, ValueUse use);
    // --name VALUE that may be given more than once: `use` gets each value, in order.
    Arguments &repeatable(const std::string &name, ValueUse use);
    // --name without a value.
    Arguments &flag(const std::string &name, bool &set);
    // One bare argument (no leading dash); `name` only labels it.
    Arguments &positional(const std::string &name, ValueUse use);

    // Reads `args` (the sub-command's name first, as runSubcommand() gets them), then hands each
    // given value to its use, in the order the options were declared. Throws HelpRequested, or
    // std::invalid_argument with a one-line message.
    void parse(const std::vector<std::string> &args);

private:
    struct Entry;
    Arguments &add(const std::string &name, CLI::Option *option, ValueUse use, bool every);

    std::string command_;
    std::unique_ptr<CLI::App> app_;
    std::vector<Entry> entries_;
};

// Value converters; each throws std::invalid_argument with a one-line message naming `flag`.
int parseInt(const std::string &flag, const std::string &value, int min);
double parseNumber(const std::string &flag, const std::string &value);                        // finite
std::optional<double> parsePositiveOrOff(const std::string &flag, const std::string &value);  // empty: off
std::string parseDevice(const std::string &flag, const std::string &value);                   // "cpu" or "cuda"
CollectiveBackend parseBackend(const std::string &flag, const std::string &value);            // auto|gloo|nccl

}  // namespace nanscope::cli
