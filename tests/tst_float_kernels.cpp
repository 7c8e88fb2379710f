// The host's vector kernels, on each code path this CPU runs (portable, AVX2): the float32 scan
// against a plain double-precision reference, at every length around its vector and block
// boundaries, and the NaN/Inf test of float32, fp16 and bf16 bits at every position.
#include "health/float_kernels.h"

#include <QtTest>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

using namespace nanscope;

Q_DECLARE_METATYPE(nanscope::KernelPath)

namespace {

const std::pair<const char *, KernelPath> kPaths[] = {{"portable", KernelPath::Portable}, {"avx2", KernelPath::Avx2}};

std::vector<float> normalValues(std::int64_t n, unsigned seed)
{
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal;
    std::vector<float> v(std::size_t(n), 0.0f);
    for (float &x : v)
        x = normal(gen);
    return v;
}

#define SKIP_UNLESS_RUNS(path)                                                                                         \
    if (!kernelPathRuns(path))                                                                                         \
    QSKIP("this CPU does not run this code path")

}  // namespace

class TestFloatKernels : public QObject {
    Q_OBJECT
private slots:
    void scanMatchesAReference_data();
    void scanMatchesAReference();
    void everyNonFiniteTakesTheExactPass_data();
    void everyNonFiniteTakesTheExactPass();
    void anyNonFiniteFindsEveryPosition_data();
    void anyNonFiniteFindsEveryPosition();
};

void TestFloatKernels::scanMatchesAReference_data()
{
    // 32 floats a step on the portable path, 16 with AVX2; squares flushed every 4096; then a tail.
    QTest::addColumn<KernelPath>("path");
    QTest::addColumn<qint64>("n");
    for (const auto &[name, path] : kPaths)
        for (qint64 n : {1, 7, 15, 16, 17, 31, 32, 33, 63, 4095, 4096, 4097, 4127, 8245})
            QTest::addRow("%s, %lld floats", name, n) << path << n;
}

void TestFloatKernels::scanMatchesAReference()
{
    QFETCH(KernelPath, path);
    QFETCH(qint64, n);
    SKIP_UNLESS_RUNS(path);
    const std::vector<float> v = normalValues(n, unsigned(n));
    double sumSq = 0, positiveSumSq = 0;
    for (float x : v) {
        sumSq += double(x) * x;
        positiveSumSq += x > 0 ? double(x) * x : 0.0;
    }
    const FloatScan s = scanFloats(v.data(), n, PositiveSquares::Summed, path);
    QVERIFY(!s.needsExactPass);
    QCOMPARE(s.lo, *std::min_element(v.begin(), v.end()));
    QCOMPARE(s.hi, *std::max_element(v.begin(), v.end()));
    QVERIFY2(std::fabs(s.sumSq - sumSq) <= 1e-6 * sumSq, qPrintable(QString::number(s.sumSq - sumSq)));
    QVERIFY(std::fabs(s.positiveSumSq - positiveSumSq) <= 1e-6 * positiveSumSq);
    // What reluHealth() relies on: the positive squares of x are, bit for bit, the squares of relu(x).
    std::vector<float> relu(v);
    for (float &x : relu)
        x = std::max(x, 0.0f);
    QCOMPARE(scanFloats(relu.data(), n, PositiveSquares::Skipped, path).sumSq, s.positiveSumSq);
    // Without the positive squares: the same statistics, bit for bit, and the squares unknown.
    const FloatScan plain = scanFloats(v.data(), n, PositiveSquares::Skipped, path);
    QCOMPARE(plain.sumSq, s.sumSq);
    QCOMPARE(plain.lo, s.lo);
    QCOMPARE(plain.hi, s.hi);
    QCOMPARE(plain.positiveSumSq, -1.0);
    QVERIFY(!plain.needsExactPass);
}

void TestFloatKernels::everyNonFiniteTakesTheExactPass_data()
{
    QTest::addColumn<KernelPath>("path");
    QTest::addColumn<int>("position");
    QTest::addColumn<float>("value");
    // 3e38's float square overflows (a tail's square is taken in double: it may stay on the fast path)
    const std::pair<const char *, float> values[] = {
        {"nan", NAN}, {"+inf", INFINITY}, {"-inf", -INFINITY}, {"3e38", 3e38f}};
    for (const auto &[pathName, path] : kPaths)
        for (const auto &[name, value] : values)
            for (int position : {0, 9, 20, 31, 4100, 4120, 8230, 8244})
                QTest::addRow("%s, %s at %d", pathName, name, position) << path << position << value;
}

void TestFloatKernels::everyNonFiniteTakesTheExactPass()
{
    QFETCH(KernelPath, path);
    QFETCH(int, position);
    QFETCH(float, value);
    SKIP_UNLESS_RUNS(path);
    std::vector<float> v = normalValues(8245, 3);
    QVERIFY(!scanFloats(v.data(), std::int64_t(v.size()), PositiveSquares::Summed, path).needsExactPass);
    double sumSq = 0;
    for (float x : v)
        sumSq += double(x) * x;
    sumSq += double(value) * value - double(v[std::size_t(position)]) * v[std::size_t(position)];
    v[std::size_t(position)] = value;
    for (const PositiveSquares squares : {PositiveSquares::Summed, PositiveSquares::Skipped}) {
        const FloatScan s = scanFloats(v.data(), std::int64_t(v.size()), squares, path);
        if (std::isfinite(value))  // either the exact pass or a right answer
            QVERIFY(s.needsExactPass || std::fabs(s.sumSq - sumSq) <= 1e-6 * sumSq);
        else
            QVERIFY(s.needsExactPass);
        QVERIFY(scanFloats(v.data(), 0, squares, path).needsExactPass);  // nothing to scan: the exact pass says so
    }
}

void TestFloatKernels::anyNonFiniteFindsEveryPosition_data()
{
    QTest::addColumn<KernelPath>("path");
    QTest::addColumn<QString>("format");
    QTest::addColumn<quint32>("bits");
    QTest::addColumn<int>("position");
    QTest::addColumn<bool>("found");
    struct Case {
        const char *name;
        const char *format;
        quint32 bits;
        bool nonFinite;
    };
    const Case cases[] = {
        {"float nan", "float", 0x7fc00000u, true},  {"float -inf", "float", 0xff800000u, true},
        {"float max", "float", 0x7f7fffffu, false}, {"fp16 nan", "fp16", 0x7e00u, true},
        {"fp16 +inf", "fp16", 0x7c00u, true},       {"fp16 65504", "fp16", 0x7bffu, false},
        {"bf16 -inf", "bf16", 0xff80u, true},       {"bf16 max", "bf16", 0x7f7fu, false},
    };
    for (const auto &[pathName, path] : kPaths)
        for (const Case &c : cases)
            for (int position : {0, 7, 15, 16, 1023, 1024, 4321, 4999})
                QTest::addRow("%s, %s at %d", pathName, c.name, position)
                    << path << QString::fromLatin1(c.format) << c.bits << position << c.nonFinite;
}

void TestFloatKernels::anyNonFiniteFindsEveryPosition()
{
    QFETCH(KernelPath, path);
    QFETCH(QString, format);
    QFETCH(quint32, bits);
    QFETCH(int, position);
    QFETCH(bool, found);
    SKIP_UNLESS_RUNS(path);
    constexpr std::int64_t n = 5000;
    if (format == QLatin1String("float")) {
        std::vector<float> v = normalValues(n, 5);
        std::vector<std::uint32_t> u(v.size());
        std::memcpy(u.data(), v.data(), v.size() * sizeof(float));
        QVERIFY(!anyNonFiniteFloat(u.data(), n, path));
        u[std::size_t(position)] = bits;
        QCOMPARE(anyNonFiniteFloat(u.data(), n, path), found);
        QCOMPARE(anyNonFiniteFloat(u.data(), position, path), false);  // stops before it
        return;
    }
    const bool bf16 = format == QLatin1String("bf16");
    const std::uint16_t mask = bf16 ? 0x7f80 : 0x7c00;
    std::vector<std::uint16_t> u(std::size_t(n), std::uint16_t(bf16 ? 0x3f80 : 0x3c00));  // 1.0
    QVERIFY(!anyNonFinite16(u.data(), n, mask, path));
    u[std::size_t(position)] = std::uint16_t(bits);
    QCOMPARE(anyNonFinite16(u.data(), n, mask, path), found);
    QCOMPARE(anyNonFinite16(u.data(), position, mask, path), false);
}

QTEST_GUILESS_MAIN(TestFloatKernels)
#include "tst_float_kernels.moc"
