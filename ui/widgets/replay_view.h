#pragma once
// "Replay this step" in the origin panel: the verdict of a step computed again from its capsule,
// the samples that make it fail and the table of changes tried (see nanscope/replay.h).
#include "nanscope/replay.h"

#include <QWidget>

class QLabel;
class QPushButton;
class QTableWidget;

namespace nanscope {

class ReplayView final : public QWidget {
    Q_OBJECT
public:
    explicit ReplayView(QWidget *parent = nullptr);

    void clear();
    void showProgress(const QString &what);
    void showReport(const ReplayReport &report);
    void showError(const QString &message);
    QString verdictText() const;
    // Each row of the what-if table as "change | from | finite|non-finite".
    QStringList whatIfRows() const;

Q_SIGNALS:
    void replayRequested();

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();
    QPushButton *replay_ = nullptr;
    QLabel *verdict_ = nullptr;
    QTableWidget *whatIf_ = nullptr;
};

// "Reproduced bit for bit", ...: the verdict in a sentence.
QString verdictSentence(ReplayVerdict verdict, double tolerance);

}  // namespace nanscope
