#pragma once
// The origin of a non-finite value in words, in the current language. The core records English
// sentences in run files; the window composes its own from the origin's fields, so that a
// translation can say them. Untranslated, the recorded sentence is shown as it is.
#include "nanscope/records.h"

#include <QCoreApplication>
#include <QString>

namespace nanscope {

// The translation context of these texts.
struct OriginText {
    Q_DECLARE_TR_FUNCTIONS(OriginText)
};

// "forward", "backward", ...
QString phaseText(Phase phase);
// "Step 3, phase forward, layer 'fc2' (produced it), op aten::addmm"
QString describeOrigin(const Origin &origin);
// "Layer 'fc2' turned finite inputs into non-finite outputs (first op: aten::addmm)."
QString explainOrigin(const Origin &origin);

}  // namespace nanscope
