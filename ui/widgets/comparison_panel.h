#pragma once
// The Comparison dock: the settings in which the window's run and the compared run differ, the
// first step where their measurements part, and where each went non-finite (what `nanscope diff`
// says, composed here so that it can be translated).
#include <QWidget>

class QLabel;
class QTableWidget;

namespace nanscope {

struct RunDiff;

class ComparisonPanel final : public QWidget {
    Q_OBJECT
public:
    explicit ComparisonPanel(QWidget *parent = nullptr);

    // `diff` null: the window's run is not in a file yet, so only the plots compare.
    void showDiff(const RunDiff *diff, const QString &thisName, const QString &otherName);
    void clear();

    QTableWidget *settingsTable() const { return settings_; }
    QString summaryText() const;

Q_SIGNALS:
    void stepActivated(int step);  // the parting step's link clicked

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();
    bool showing_ = false;  // a comparison is shown (its texts come again with the next one)
    QLabel *summary_ = nullptr;
    QTableWidget *settings_ = nullptr;
};

}  // namespace nanscope
