// The spread `bench` reports of its rounds: quartiles, the median, and the median's 95% confidence
// interval from the order statistics (the values of the usual tables, and a coverage check).
#include "bench/round_statistics.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace nanscope;

class TestRoundStatistics : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void orderStatistics_data();
    void orderStatistics();
    void noRoundsNoSpread();
    void intervalCoversTheMedianNineteenTimesInTwenty();
};

void TestRoundStatistics::orderStatistics_data()
{
    // Rounds 1..n, shuffled: each statistic is the order statistic it names.
    QTest::addColumn<int>("n");
    QTest::addColumn<double>("median");
    QTest::addColumn<double>("lowQuartile");
    QTest::addColumn<double>("highQuartile");
    QTest::addColumn<double>("medianLow");
    QTest::addColumn<double>("medianHigh");
    QTest::newRow("one round") << 1 << 1.0 << 1.0 << 1.0 << 1.0 << 1.0;
    QTest::newRow("four: the interval is every round") << 4 << 2.5 << 2.0 << 4.0 << 1.0 << 4.0;
    QTest::newRow("nine") << 9 << 5.0 << 3.0 << 7.0 << 1.0 << 9.0;
    QTest::newRow("100: the 40th and 61st") << 100 << 50.5 << 26.0 << 76.0 << 40.0 << 61.0;
    QTest::newRow("200: the 86th and 115th") << 200 << 100.5 << 51.0 << 151.0 << 86.0 << 115.0;
    QTest::newRow("1001") << 1001 << 501.0 << 251.0 << 751.0 << 469.0 << 533.0;
}

void TestRoundStatistics::orderStatistics()
{
    QFETCH(int, n);
    std::vector<double> rounds(static_cast<std::size_t>(n));
    std::iota(rounds.begin(), rounds.end(), 1.0);
    std::shuffle(rounds.begin(), rounds.end(), std::mt19937(7));
    const RoundSpread s = spreadOf(rounds);
    QTEST(s.median, "median");
    QTEST(s.lowQuartile, "lowQuartile");
    QTEST(s.highQuartile, "highQuartile");
    QTEST(s.medianLow, "medianLow");
    QTEST(s.medianHigh, "medianHigh");
}

void TestRoundStatistics::noRoundsNoSpread()
{
    const RoundSpread s = spreadOf({});
    QCOMPARE(s.median, 0.0);
    QCOMPARE(s.medianLow, 0.0);
    QCOMPARE(s.medianHigh, 0.0);
}

void TestRoundStatistics::intervalCoversTheMedianNineteenTimesInTwenty()
{
    // Rounds skewed as a busy machine's are (exponential: a long tail of slow rounds), whose true
    // median is ln 2: over 4000 benchmarks of 150 rounds the interval holds it about 95% of the time.
    std::mt19937 random(11);
    std::exponential_distribution<double> slow(1.0);
    const double trueMedian = std::log(2.0);
    int covered = 0;
    constexpr int kBenchmarks = 4000;
    for (int b = 0; b < kBenchmarks; ++b) {
        std::vector<double> rounds(150);
        for (double &r : rounds)
            r = slow(random);
        const RoundSpread s = spreadOf(rounds);
        QVERIFY(s.medianLow <= s.median && s.median <= s.medianHigh);
        covered += s.medianLow <= trueMedian && trueMedian <= s.medianHigh ? 1 : 0;
    }
    const double coverage = double(covered) / kBenchmarks;
    QVERIFY2(coverage > 0.93 && coverage < 0.975, qPrintable(QString::number(coverage)));
}

QTEST_GUILESS_MAIN(TestRoundStatistics)
#include "tst_round_statistics.moc"
