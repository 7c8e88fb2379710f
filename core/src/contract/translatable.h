#pragma once
// Marks English text the core writes that the window shows in its own language: scenario titles,
// fixes, challenges. Qt's lupdate finds these by the name QT_TRANSLATE_NOOP in the core sources it
// is given (ui/CMakeLists.txt), and the window translates them in the context "nanscope::core"
// (ui/widgets/core_text.h). The core stays free of Qt: here the macro is the text itself, spelled
// exactly as Qt spells it so that a file seeing both definitions sees one.
#ifndef QT_TRANSLATE_NOOP
#define QT_TRANSLATE_NOOP(scope, x) x
#endif
