#pragma once
// What an event says, as the id of a sentence and its arguments (numbers and names already
// written as text), so that a reader composes the sentence in its own language: the window
// translates the sentence's pattern, while Event::text, run files and the command line keep the
// English. An event raised from text alone (an error's message) has no id.
#include <string>
#include <utility>
#include <vector>

namespace nanscope {

struct EventMessage {
    std::string id;  // "run-started"; empty: the event's text is all there is
    std::vector<std::string> args;

    bool empty() const { return id.empty(); }
    bool operator==(const EventMessage &o) const { return id == o.id && args == o.args; }
};

// The English pattern of a message id, with %1, %2, ... for its arguments; nullptr for an id
// this build does not know (a newer file's).
const char *eventMessagePattern(const std::string &id);

// Every id this build knows with its English pattern, in a fixed order: format.json carries them
// to the Python recorder, so that both writers say the same sentences under the same ids.
std::vector<std::pair<std::string, std::string>> eventMessagePatterns();

// The English sentence: the pattern with each %N replaced by its argument. An unknown id gives
// its arguments joined by spaces.
std::string composeEventText(const EventMessage &message);

}  // namespace nanscope
