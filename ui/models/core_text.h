#pragma once
// The core's English texts that the window shows translated (core/src/contract/translatable.h):
// scenario titles, fixes, challenges, precision labels, the run's state and its events'
// sentences. Text the core did not mark comes back unchanged.
#include <QCoreApplication>
#include <QString>

#include "nanscope/event_message.h"

#include <string>

namespace nanscope {

inline QString coreText(const std::string &english)
{
    return QCoreApplication::translate("nanscope::core", english.c_str());
}

// An event's sentence (nanscope/event_message.h) in the window's language: the translated
// pattern with %1..%9 replaced by the arguments, as the core composes the English. Empty for a
// message this build does not know.
QString coreMessageText(const EventMessage &message);

}  // namespace nanscope
