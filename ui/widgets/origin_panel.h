#pragma once
// Where the first non-finite value of the run was born: phase, layer, op and source, with a plain
// sentence. While the run is paused on a non-finite step (its update not applied yet), the
// actions skip the batch, retry it with the changed controls, roll back, or continue; a Python
// loop's pause (nanscope.record) cannot retry, and can be stopped.
#include "nanscope/records.h"

#include <QWidget>

class QLabel;
class QPushButton;

namespace nanscope {

class ReplayView;

class OriginPanel final : public QWidget {
    Q_OBJECT
public:
    explicit OriginPanel(QWidget *parent = nullptr);

    void clear();
    void showOrigin(const Origin &origin);
    // The run paused before applying `step` (the origin's, or `step` when the origin is not known
    // yet, as for a Python loop); the decision buttons are live until decided().
    void showPaused(const Origin &origin, int step = -1, bool pythonLoop = false);
    void decided();
    bool awaitingDecision() const { return awaiting_; }
    QString text() const;
    ReplayView *replay() const { return replay_; }

Q_SIGNALS:
    void skipRequested();
    void retryRequested();
    void rollbackRequested();
    void continueRequested();
    void stopRequested();

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();
    void showText();

    QLabel *summary_ = nullptr;
    QLabel *details_ = nullptr;
    QPushButton *skip_ = nullptr;
    QPushButton *retry_ = nullptr;
    QPushButton *rollback_ = nullptr;
    QPushButton *continue_ = nullptr;
    QPushButton *stop_ = nullptr;  // a Python loop's pause only
    ReplayView *replay_ = nullptr;
    bool awaiting_ = false;
    Origin shown_;         // invalid: none so far
    bool pausedOn_ = false;  // shown_ is the step the run paused on
    int pausedStep_ = -1;
};


}  // namespace nanscope
