// Which collectives a job's ranks choose from what each offered at the rendezvous: NCCL only when
// every rank can use it on a GPU of its own, the same answer on every rank, and one line naming
// the ranks where the request cannot be met. No processes, no GPU: the rule alone.
#include "distributed/collectives_choice.h"
#include "distributed/rank_group.h"

#include <QtTest>

using namespace nanscope;

Q_DECLARE_METATYPE(std::vector<nanscope::CollectivesOffer>)

namespace {

CollectivesOffer gpu(const char *backend, const char *host, const char *pci) { return {backend, host, pci, {}}; }
CollectivesOffer noGpu(const char *backend, const char *host, const char *why) { return {backend, host, {}, why}; }

}  // namespace

class TestCollectivesChoice : public QObject {
    Q_OBJECT

private slots:
    void theRanksChooseAlike_data();
    void theRanksChooseAlike();
    void anOfferSurvivesTheStore();
};

void TestCollectivesChoice::theRanksChooseAlike_data()
{
    QTest::addColumn<std::vector<CollectivesOffer>>("offers");
    QTest::addColumn<QString>("chosen");  // "nccl", "gloo", or the error's text
    QTest::newRow("a GPU each, one machine")
        << std::vector<CollectivesOffer>{gpu("auto", "a", "0000:3b:00.0"), gpu("auto", "a", "0000:5e:00.0")}
        << QStringLiteral("nccl");
    QTest::newRow("the same bus address on two machines")
        << std::vector<CollectivesOffer>{gpu("auto", "a", "0000:3b:00.0"), gpu("auto", "b", "0000:3b:00.0")}
        << QStringLiteral("nccl");
    QTest::newRow("two ranks on one GPU")
        << std::vector<CollectivesOffer>{gpu("auto", "a", "0000:3b:00.0"), gpu("auto", "a", "0000:5e:00.0"),
                                         gpu("auto", "a", "0000:3b:00.0")}
        << QStringLiteral("gloo");
    QTest::newRow("a CPU job") << std::vector<CollectivesOffer>{noGpu("auto", "a", "the job trains on the CPU"),
                                                                noGpu("auto", "a", "the job trains on the CPU")}
                               << QStringLiteral("gloo");
    QTest::newRow("Gloo asked for") << std::vector<CollectivesOffer>{gpu("gloo", "a", "0000:3b:00.0"),
                                                                     gpu("gloo", "a", "0000:5e:00.0")}
                                    << QStringLiteral("gloo");
    QTest::newRow("one rank of 1") << std::vector<CollectivesOffer>{gpu("nccl", "a", "0000:3b:00.0")}
                                   << QStringLiteral("nccl");
    QTest::newRow("NCCL where rank 1 cannot")
        << std::vector<CollectivesOffer>{gpu("nccl", "a", "0000:3b:00.0"),
                                         noGpu("nccl", "b", "LibTorch sees no CUDA device")}
        << QStringLiteral("--backend nccl: rank 1 cannot use NCCL: LibTorch sees no CUDA device");
    QTest::newRow("NCCL on a shared GPU")
        << std::vector<CollectivesOffer>{gpu("nccl", "a", "0000:3b:00.0"), gpu("nccl", "b", "0000:3b:00.0"),
                                         gpu("nccl", "b", "0000:3b:00.0")}
        << QStringLiteral(
               "--backend nccl: ranks 1 and 2 share the GPU 0000:3b:00.0 on b, and NCCL needs a GPU per rank");
    QTest::newRow("different requests")
        << std::vector<CollectivesOffer>{gpu("auto", "a", "0000:3b:00.0"), gpu("auto", "a", "0000:5e:00.0"),
                                         gpu("nccl", "a", "0000:86:00.0")}
        << QStringLiteral("the ranks asked for different collectives: rank 0 --backend auto, rank 2 --backend nccl");
}

void TestCollectivesChoice::theRanksChooseAlike()
{
    QFETCH(std::vector<CollectivesOffer>, offers);
    QFETCH(QString, chosen);
    QString got;
    try {
        got = chooseNccl(offers) ? QStringLiteral("nccl") : QStringLiteral("gloo");
    } catch (const RankGroupError &e) {
        got = QString::fromStdString(e.what());
    }
    QCOMPARE(got, chosen);
}

void TestCollectivesChoice::anOfferSurvivesTheStore()
{
    // What a rank writes to the store reads back whole, a reason with its own punctuation included.
    const CollectivesOffer sent = noGpu("nccl", "node7", "LOCAL_RANK 3: no GPU (this machine has 2)");
    const CollectivesOffer read = CollectivesOffer::decoded(sent.encoded(), "node7");
    QCOMPARE(QString::fromStdString(read.backend), QStringLiteral("nccl"));
    QVERIFY(read.gpu.empty());
    QCOMPARE(QString::fromStdString(read.why), QStringLiteral("LOCAL_RANK 3: no GPU (this machine has 2)"));
    const CollectivesOffer withGpu = CollectivesOffer::decoded(gpu("auto", "a", "0000:3b:00.0").encoded(), "a");
    QCOMPARE(QString::fromStdString(withGpu.gpu), QStringLiteral("0000:3b:00.0"));
    QVERIFY(withGpu.why.empty());
}

QTEST_GUILESS_MAIN(TestCollectivesChoice)
#include "tst_collectives_choice.moc"
