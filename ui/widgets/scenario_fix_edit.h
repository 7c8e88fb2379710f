#pragma once
// The fix a scenario's lesson teaches (ScenarioFix), as a switch with its value where it has one
// (an eps), for a scenario that has such a fix. It says when the fix takes effect: at
// the next step, or at Start for a fix of the data or the init.
#include "nanscope/scenario.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QLineEdit;

namespace nanscope {

class ScenarioFixEdit final : public QWidget {
    Q_OBJECT
public:
    explicit ScenarioFixEdit(QWidget *parent = nullptr);

    // The fix of `scenario` (an id; empty or unknown: none, and the panel hides the edit's row).
    void setScenario(const std::string &scenario);
    const ScenarioFix &fix() const { return fix_; }
    // Empty: off; else on, with the value typed (the default while the text is not a number > 0).
    std::optional<double> value() const;
    void setValue(std::optional<double> value);
    QCheckBox *switchBox() const { return on_; }

Q_SIGNALS:
    void edited();

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();

    ScenarioFix fix_;
    QCheckBox *on_ = nullptr;
    QLineEdit *value_ = nullptr;
};

}  // namespace nanscope
