// The window in Chinese: the translation is complete and up to date with the sources, the window
// starts in it, and View › Language switches it back and forth at once, origin sentence included.
#include "live_session.h"
#include "nanscope/scenario.h"
#include "widgets/language.h"
#include "widgets/lesson_pane.h"
#include "widgets/map_colour_scale.h"
#include "widgets/nan_map_view.h"
#include "widgets/origin_panel.h"
#include "models/event_log_model.h"
#include "window/main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QApplication>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QCheckBox>
#include <QLabel>
#include <QTemporaryDir>
#include <QFontDatabase>
#include <QImage>
#include <QPainter>
#include <QXmlStreamReader>
#include <QtTest>

using namespace nanscope;

class TestTranslations : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyMessageIsTranslated();
    void translationCoversEverySourceText();
    void windowShowsChineseAndSwitchesBack();
    void everyLessonIsWrittenInChinese();
    void chineseGlyphsAreDrawn();
    void cleanup() { setLanguage(QStringLiteral("en"), false); }
};

namespace {

const QString kTsFile = QStringLiteral(NANSCOPE_SOURCE_DIR "/translations/nanscope_zh_CN.ts");

struct TsCounts {
    int messages = 0;
    int unfinished = 0;  // type="unfinished", or no text at all
    QStringList unfinishedSources;
};

TsCounts countTs(const QString &path)
{
    TsCounts c;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return c;
    QXmlStreamReader xml(&file);
    QString source;
    while (!xml.atEnd()) {
        if (!xml.readNextStartElement())
            continue;
        if (xml.name() == QLatin1String("source")) {
            source = xml.readElementText();
        } else if (xml.name() == QLatin1String("translation")) {
            ++c.messages;
            const bool unfinished = xml.attributes().value(QLatin1String("type")) == QLatin1String("unfinished");
            const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
            if (unfinished || text.trimmed().isEmpty()) {
                ++c.unfinished;
                c.unfinishedSources << source;
            }
        }
    }
    return c;
}

QMenu *menu(MainWindow &w, const char *name) { return w.findChild<QMenu *>(QString::fromLatin1(name)); }

}  // namespace

void TestTranslations::everyMessageIsTranslated()
{
    const TsCounts c = countTs(kTsFile);
    QVERIFY2(c.messages > 300, qPrintable(QString::number(c.messages)));
    QVERIFY2(c.unfinished == 0, qPrintable(c.unfinishedSources.join(QStringLiteral(" | "))));
}

// lupdate over the window's sources finds no text the .ts file lacks: a string added to the window
// without its translation fails here, not in front of a class.
void TestTranslations::translationCoversEverySourceText()
{
    QTemporaryDir dir;
    const QString copy = dir.filePath(QStringLiteral("copy.ts"));
    QVERIFY(QFile::copy(kTsFile, copy));
    QProcess lupdate;
    lupdate.setProcessChannelMode(QProcess::MergedChannels);
    const QStringList sources = QStringList{QStringLiteral(NANSCOPE_SOURCE_DIR "/ui"),
                                           QStringLiteral(NANSCOPE_SOURCE_DIR "/app")} +
                                QStringLiteral(NANSCOPE_CORE_TEXTS).split(QLatin1Char(','));
    lupdate.start(QStringLiteral(NANSCOPE_LUPDATE),
                  QStringList{QStringLiteral("-locations"), QStringLiteral("none"), QStringLiteral("-no-obsolete")} +
                      sources + QStringList{QStringLiteral("-ts"), copy});
    QVERIFY(lupdate.waitForFinished(60000));
    const QString out = QString::fromLocal8Bit(lupdate.readAll());
    QCOMPARE(lupdate.exitCode(), 0);
    QVERIFY2(out.contains(QLatin1String("(0 new and")), qPrintable(out));
    const TsCounts c = countTs(copy);
    QVERIFY2(c.unfinished == 0, qPrintable(c.unfinishedSources.join(QStringLiteral(" | "))));
}

void TestTranslations::windowShowsChineseAndSwitchesBack()
{
    QVERIFY(availableLanguages().contains(QStringLiteral("zh_CN")));
    QVERIFY(setLanguage(QStringLiteral("zh_CN"), false));
    MainWindow w(newLiveSession);
    w.show();
    QCOMPARE(menu(w, "fileMenu")->title(), QStringLiteral("文件(&F)"));
    QCOMPARE(w.action(QStringLiteral("start"))->text(), QStringLiteral("开始(&S)"));
    QCOMPARE(w.findChild<QDockWidget *>(QStringLiteral("origin"))->windowTitle(), QStringLiteral("来源"));
    QVERIFY(w.findChild<QAction *>(QStringLiteral("language_zh_CN"))->isChecked());

    // zero-division: NaN born in forward in `normalize` at step 0, said in Chinese.
    w.selectScenario(QStringLiteral("zero-division"));
    w.setSteps(3);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    QVERIFY2(w.originText().contains(QStringLiteral("第 0 步，阶段：前向")), qPrintable(w.originText()));
    QVERIFY2(w.originText().contains(QStringLiteral("层 'normalize' 把有限的输入变成了非有限的输出")),
             qPrintable(w.originText()));
    const auto *scale = w.nanMap()->findChild<MapColourScale *>(QStringLiteral("mapScale"));
    QCOMPARE(scale->label(), QStringLiteral("NaN/Inf 值所占比例"));
    // The events' sentences, composed from their message in the window's language.
    const auto eventText = [&w](int row) {
        return w.eventModel()->index(row, EventLogModel::MessageColumn).data().toString();
    };
    QCOMPARE(eventText(0), QStringLiteral("运行 1：zero-division，设备 cpu，fp32，sgd"));
    QVERIFY2(eventText(2).startsWith(QStringLiteral("第 0 步的胶囊（first-non-finite）：")), qPrintable(eventText(2)));
    // The core's texts too: the scenario's fix and its challenge, from the core's catalogue.
    const auto *fixSwitch = w.findChild<QCheckBox *>(QStringLiteral("scenarioFixSwitch"));
    QCOMPARE(fixSwitch->text(), QStringLiteral("除数中的 eps"));
    QCOMPARE(w.findChild<QLabel *>(QStringLiteral("challengeGoal"))->text(),
             QStringLiteral("保留 ReLU 分数，训练 30 步且没有任何一步出现非有限值。"));

    // Presentation mode enlarges the Chinese window as it does the English one.
    const qreal normal = w.font().pointSizeF();
    w.action(QStringLiteral("presentation"))->trigger();
    QVERIFY(w.font().pointSizeF() > normal * 1.5);
    QVERIFY(w.findChild<QLabel *>(QStringLiteral("challengeGoal"))->font().pointSizeF() > normal * 1.5);
    w.setPresentationMode(false);

    // English at once, without a new window: menus, docks and the origin's sentence.
    w.findChild<QAction *>(QStringLiteral("language_en"))->trigger();
    QCoreApplication::processEvents();
    QCOMPARE(currentLanguage(), QStringLiteral("en"));
    QCOMPARE(menu(w, "fileMenu")->title(), QStringLiteral("&File"));
    QCOMPARE(w.findChild<QDockWidget *>(QStringLiteral("origin"))->windowTitle(), QStringLiteral("Origin"));
    QVERIFY2(w.originText().contains(QStringLiteral("Layer 'normalize' turned finite inputs into non-finite outputs")),
             qPrintable(w.originText()));
    QCOMPARE(scale->label(), QStringLiteral("share of NaN/Inf values"));
    QCOMPARE(fixSwitch->text(), QStringLiteral("eps in the divisor"));
    QCOMPARE(eventText(0), QStringLiteral("run 1: zero-division on cpu, fp32, sgd"));
    QCOMPARE(w.findChild<QLabel *>(QStringLiteral("challengeGoal"))->text(),
             QStringLiteral("Train 30 steps without a non-finite step, keeping the ReLU scores."));

    // And back: the choice is kept for the next session.
    w.findChild<QAction *>(QStringLiteral("language_zh_CN"))->trigger();
    QCoreApplication::processEvents();
    QCOMPARE(menu(w, "viewMenu")->title(), QStringLiteral("视图(&V)"));
    QCOMPARE(startupLanguage(), QStringLiteral("zh_CN"));
    QVERIFY2(w.originText().contains(QStringLiteral("前向")), qPrintable(w.originText()));

    // The lesson follows the language.
    w.selectScenario(QStringLiteral("hidden-by-nan-to-num"));
    QVERIFY(w.lessonPane()->toPlainText().contains(QStringLiteral("清洗不等于修复")));
    w.findChild<QAction *>(QStringLiteral("language_en"))->trigger();
    QCoreApplication::processEvents();
    QVERIFY(w.lessonPane()->toPlainText().contains(QStringLiteral("sanitising is not fixing")));
}

// Each scenario's lesson has its Chinese text, with the same sections as the English one.
void TestTranslations::everyLessonIsWrittenInChinese()
{
    LessonPane pane;  // registers the resources
    QVERIFY(setLanguage(QStringLiteral("zh_CN"), false));
    for (const ScenarioInfo &s : scenarios()) {
        const QString id = QString::fromStdString(s.id);
        QVERIFY2(QFile::exists(QStringLiteral(":/lessons/zh_CN/%1.md").arg(id)), qPrintable(id));
        QVERIFY2(pane.showLesson(id), qPrintable(id));
        const QString text = pane.toPlainText();
        QVERIFY2(text.contains(QStringLiteral("设置。")), qPrintable(id));
        QVERIFY2(text.contains(QStringLiteral("修复")) || text.contains(QStringLiteral("可以尝试")), qPrintable(id));
    }
}

// A font with Chinese glyphs is in use (fonts-noto-cjk, which the packages recommend): two
// different characters drawn in the window's font differ. Without one, both come out as the same
// missing-glyph box.
void TestTranslations::chineseGlyphsAreDrawn()
{
    QVERIFY2(!QFontDatabase::families(QFontDatabase::SimplifiedChinese).isEmpty(),
             "no font for Simplified Chinese: install fonts-noto-cjk");
    QVERIFY(setLanguage(QStringLiteral("zh_CN"), false));
    MainWindow w(newLiveSession);
    const auto drawn = [&w](const QString &text) {
        QImage image(64, 64, QImage::Format_Grayscale8);
        image.fill(Qt::white);
        QPainter p(&image);
        p.setFont(w.font());
        p.setPen(Qt::black);
        p.drawText(image.rect(), Qt::AlignCenter, text);
        return image;
    };
    const QImage zhong = drawn(QStringLiteral("中")), wen = drawn(QStringLiteral("文"));
    QVERIFY(zhong != drawn(QString()));  // something was drawn
    QVERIFY2(zhong != wen, "two Chinese characters drawn alike: no font has their glyphs");
}

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QApplication app(argc, argv);
    QSettings().remove(QStringLiteral("language"));
    TestTranslations t;
    return QTest::qExec(&t, argc, argv);
}
#include "tst_translations.moc"
