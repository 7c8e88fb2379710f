#include "models/core_text.h"

namespace nanscope {

QString coreMessageText(const EventMessage &message)
{
    const char *pattern = eventMessagePattern(message.id);
    if (!pattern)
        return QString();
    const QString translated = coreText(pattern);
    QString out;
    for (qsizetype i = 0; i < translated.size(); ++i) {
        const QChar c = translated.at(i);
        const QChar next = i + 1 < translated.size() ? translated.at(i + 1) : QChar();
        if (c == QLatin1Char('%') && next >= QLatin1Char('1') && next <= QLatin1Char('9')) {
            const std::size_t n = std::size_t(next.unicode() - '1');
            if (n < message.args.size())  // a name the core marks ("fp16 (emulated on CPU)") translated too
                out += coreText(message.args[n]);
            ++i;
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace nanscope
