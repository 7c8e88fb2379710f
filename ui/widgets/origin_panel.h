#pragma once
// Where the first non-finite value of the run was born: phase, layer, op and source, with a plain
// sentence. While the run is paused on a non-finite step (its update not applied yet), the
// actions skip the batch, retry it with the changed controls, roll back, or continue.
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
    // The run paused before applying `step`; the decision buttons are live until decided().
    void showPaused(const Origin &origin);
    void decided();
    bool awaitingDecision() const { return awaiting_; }
    QString text() const;
    ReplayView *replay() const { return replay_; }

Q_SIGNALS:
    void skipRequested();
    void retryRequested();
    void rollbackRequested();
    void continueRequested();

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
    ReplayView *replay_ = nullptr;
    bool awaiting_ = false;
    Origin shown_;         // invalid: none so far
    bool pausedOn_ = false;  // shown_ is the step the run paused on
};


}  // namespace nanscope
