#pragma once
// View > Challenges: every scenario's challenge and where this session stands with it (not tried,
// tried, solved), for a teacher walking the room. Not modal: it follows the runs as they end.
#include <QDialog>
#include <QMap>

class QTableWidget;

namespace nanscope {

enum class ChallengeState { NotTried, Tried, Solved };

class ChallengesDialog final : public QDialog {
    Q_OBJECT
public:
    explicit ChallengesDialog(QWidget *parent = nullptr);

    // The states by scenario id; a scenario not in `states` is not tried.
    void showStates(const QMap<QString, ChallengeState> &states);
    QTableWidget *table() const { return table_; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void fill();

    QMap<QString, ChallengeState> states_;
    QTableWidget *table_ = nullptr;
};

}  // namespace nanscope
