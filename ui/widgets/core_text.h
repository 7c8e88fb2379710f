#pragma once
// The core's English texts that the window shows translated (core/src/contract/translatable.h):
// scenario titles, fixes, challenges. Text the core did not mark comes back unchanged.
#include <QCoreApplication>
#include <QString>

#include <string>

namespace nanscope {

inline QString coreText(const std::string &english)
{
    return QCoreApplication::translate("nanscope::core", english.c_str());
}

}  // namespace nanscope
