// The loss scaler's rules, one by one, with the numbers GradScaler gives: start at 65536, x0.5
// and skip on a step with Inf/NaN gradients, x2 after 2000 clean steps in a row.
#include "training/loss_scaler.h"

#include <QtTest>

#include <cmath>

using namespace nanscope;

namespace {

// '.' a step with finite gradients, 'x' one whose gradients held Inf or NaN.
int feed(LossScaler &s, const QString &steps)
{
    int skipped = 0;
    for (const QChar c : steps) {
        const LossScaler::Outcome o = s.update(c != QLatin1Char('x'));
        skipped += o.applyStep ? 0 : 1;
    }
    return skipped;
}

}  // namespace

class TestLossScaler : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void defaultsAreGradScalers();
    void sequences_data();
    void sequences();
    void growsAfter2000CleanStepsInARow();
    void outcomeOfOneStep();
    void growthStaysFinite();
    void resetStartsOver();
    void invalidOptions_data();
    void invalidOptions();
};

void TestLossScaler::defaultsAreGradScalers()
{
    const LossScaler s;
    QCOMPARE(s.scale(), 65536.0);
    QCOMPARE(s.growthTracker(), 0);
    QCOMPARE(s.options().growthFactor, 2.0);
    QCOMPARE(s.options().backoffFactor, 0.5);
    QCOMPARE(s.options().growthInterval, 2000);
}

void TestLossScaler::sequences_data()
{
    QTest::addColumn<double>("initial");
    QTest::addColumn<int>("interval");
    QTest::addColumn<double>("growth");
    QTest::addColumn<double>("backoff");
    QTest::addColumn<QString>("steps");
    QTest::addColumn<double>("scale");
    QTest::addColumn<int>("tracker");
    QTest::addColumn<int>("skipped");
    QTest::addRow("one overflow halves") << 65536.0 << 2000 << 2.0 << 0.5 << "x" << 32768.0 << 0 << 1;
    QTest::addRow("thirteen overflows") << 65536.0 << 2000 << 2.0 << 0.5 << "xxxxxxxxxxxxx" << 8.0 << 0 << 13;
    QTest::addRow("clean steps keep the scale") << 65536.0 << 2000 << 2.0 << 0.5 << "....." << 65536.0 << 5 << 0;
    QTest::addRow("an overflow resets the count") << 1024.0 << 3 << 2.0 << 0.5 << "..x.." << 512.0 << 2 << 1;
    QTest::addRow("growth after the interval") << 1024.0 << 3 << 2.0 << 0.5 << "..x..." << 1024.0 << 0 << 1;
    QTest::addRow("three growths") << 1.0 << 2 << 2.0 << 0.5 << "......" << 8.0 << 0 << 0;
    QTest::addRow("other factors") << 256.0 << 2 << 4.0 << 0.25 << "x..x" << 64.0 << 0 << 2;
    QTest::addRow("below one") << 1.0 << 2000 << 2.0 << 0.5 << "xxx" << 0.125 << 0 << 3;
}

void TestLossScaler::sequences()
{
    QFETCH(double, initial);
    QFETCH(int, interval);
    QFETCH(double, growth);
    QFETCH(double, backoff);
    QFETCH(QString, steps);
    QFETCH(double, scale);
    QFETCH(int, tracker);
    QFETCH(int, skipped);
    LossScaling o;
    o.initialScale = initial;
    o.growthInterval = interval;
    o.growthFactor = growth;
    o.backoffFactor = backoff;
    LossScaler s(o);
    QCOMPARE(feed(s, steps), skipped);
    QCOMPARE(s.scale(), scale);
    QCOMPARE(s.growthTracker(), tracker);
}

void TestLossScaler::growsAfter2000CleanStepsInARow()
{
    LossScaler s;
    QCOMPARE(feed(s, QString(1999, QLatin1Char('.'))), 0);
    QCOMPARE(s.scale(), 65536.0);
    QCOMPARE(s.growthTracker(), 1999);
    const LossScaler::Outcome o = s.update(true);
    QVERIFY(o.applyStep && o.grew());
    QCOMPARE(o.scaleUsed, 65536.0);
    QCOMPARE(o.nextScale, 131072.0);
    QCOMPARE(s.growthTracker(), 0);
    // An overflow at step 1999 of the next run of clean steps costs the growth.
    feed(s, QString(1999, QLatin1Char('.')) + QLatin1Char('x') + QString(1999, QLatin1Char('.')));
    QCOMPARE(s.scale(), 65536.0);
    QCOMPARE(s.growthTracker(), 1999);
}

void TestLossScaler::outcomeOfOneStep()
{
    LossScaler s;
    const LossScaler::Outcome o = s.update(false);
    QVERIFY(!o.applyStep);
    QVERIFY(o.backedOff() && !o.grew());
    QCOMPARE(o.scaleUsed, 65536.0);
    QCOMPARE(o.nextScale, 32768.0);
    QCOMPARE(s.scale(), o.nextScale);
}

void TestLossScaler::growthStaysFinite()
{
    LossScaling o;
    o.initialScale = 1e308;
    o.growthInterval = 1;
    LossScaler s(o);
    const LossScaler::Outcome out = s.update(true);
    QVERIFY(out.applyStep);
    QCOMPARE(s.scale(), 1e308);  // 2e308 is not a double: GradScaler keeps the old scale
    QCOMPARE(s.growthTracker(), 0);
}

void TestLossScaler::resetStartsOver()
{
    LossScaler s;
    feed(s, QStringLiteral("xx.."));
    QCOMPARE(s.scale(), 16384.0);
    LossScaling o;
    o.initialScale = 128;
    s.reset(o);
    QCOMPARE(s.scale(), 128.0);
    QCOMPARE(s.growthTracker(), 0);
}

void TestLossScaler::invalidOptions_data()
{
    QTest::addColumn<double>("initial");
    QTest::addColumn<double>("growth");
    QTest::addColumn<double>("backoff");
    QTest::addColumn<int>("interval");
    QTest::addColumn<QString>("message");
    QTest::addRow("zero scale") << 0.0 << 2.0 << 0.5 << 10 << "initial loss scale";
    QTest::addRow("infinite scale") << double(INFINITY) << 2.0 << 0.5 << 10 << "initial loss scale";
    QTest::addRow("NaN scale") << double(NAN) << 2.0 << 0.5 << 10 << "initial loss scale";
    QTest::addRow("growth 1") << 1.0 << 1.0 << 0.5 << 10 << "growth factor";
    QTest::addRow("backoff 1") << 1.0 << 2.0 << 1.0 << 10 << "backoff factor";
    QTest::addRow("backoff 0") << 1.0 << 2.0 << 0.0 << 10 << "backoff factor";
    QTest::addRow("interval 0") << 1.0 << 2.0 << 0.5 << 0 << "growth interval";
}

void TestLossScaler::invalidOptions()
{
    QFETCH(double, initial);
    QFETCH(double, growth);
    QFETCH(double, backoff);
    QFETCH(int, interval);
    QFETCH(QString, message);
    LossScaling o;
    o.initialScale = initial;
    o.growthFactor = growth;
    o.backoffFactor = backoff;
    o.growthInterval = interval;
    QVERIFY(QString::fromStdString(o.invalidReason()).contains(message));
    bool threw = false;
    try {
        LossScaler s(o);
    } catch (const std::invalid_argument &e) {
        threw = QString::fromLatin1(e.what()).contains(message);
    }
    QVERIFY(threw);
    QVERIFY(LossScaling{}.invalidReason().empty());
}

QTEST_GUILESS_MAIN(TestLossScaler)
#include "tst_loss_scaler.moc"
