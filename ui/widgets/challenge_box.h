#pragma once
// The challenge of the scenario on show, below its lesson (docs/challenges.md): the goal, the hints
// revealed one at a time, and a clear mark once a run of this session has met the goal. The run
// decides whether it did (RunSummary::challenge); this box only shows it.
#include <QFrame>

class QLabel;
class QPushButton;

namespace nanscope {

struct Challenge;

class ChallengeBox final : public QFrame {
    Q_OBJECT
public:
    explicit ChallengeBox(QWidget *parent = nullptr);

    // The challenge of `scenario` (hidden when it has none) with no hint shown; `solved`: a run of
    // this session met it already.
    void showChallenge(const QString &scenario, bool solved);
    // A run of the scenario on show ended: whether it met the goal.
    void showResult(bool met);
    int hintsShown() const { return hintsShown_; }
    bool solved() const { return solved_; }
    QPushButton *hintButton() const { return hint_; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();

    const Challenge *challenge_ = nullptr;
    int hintsShown_ = 0;
    bool solved_ = false;
    bool tried_ = false;  // a run of it ended while it was on show
    QLabel *title_ = nullptr;
    QLabel *goal_ = nullptr;
    QLabel *hints_ = nullptr;
    QLabel *state_ = nullptr;
    QPushButton *hint_ = nullptr;
};

}  // namespace nanscope
