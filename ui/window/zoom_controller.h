#pragma once
// Zooming into a stretch of a long run: the window's store keeps buckets as wide as the whole run
// needs; the run file keeps the stretch's single steps and chunks, which this controller reads
// back (StretchLoader) once a zoom or a pan of the plots settles, and shows in the plots and the
// map until they follow the run again. It owns the stretch; the window tells it when the run
// changes and asks it which store the map draws.
#include "run/run_store.h"
#include "window/stretch_loader.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>

namespace nanscope {

class NanMapView;
class PlotPanel;

class ZoomController final : public QObject {
    Q_OBJECT
public:
    // `store`: the whole run's, as the window keeps it. `runFile`: the file the stretch is read
    // from ("" when none: no stretch); `flush`: puts the steps shown into that file first (a run
    // being recorded).
    ZoomController(PlotPanel *plots, NanMapView *map, const RunStore &store, std::function<QString()> runFile,
                   std::function<void()> flush, QObject *parent = nullptr);

    const RunStore &mapStore() const;  // the stretch shown, or the whole run's store
    StretchLoader *loader() { return &loader_; }
    void drop();  // back to the whole run (a new run, a run closed)
    void renewLive();  // new steps arrived: a stretch at a live run's end is read again, now and then

Q_SIGNALS:
    void failed(const QString &message);  // the stretch could not be read

private:
    void update();
    void show();

    PlotPanel *plots_;
    NanMapView *map_;
    const RunStore &store_;
    std::function<QString()> runFile_;
    std::function<void()> flush_;
    QTimer settle_;  // a zoom or a pan settles before its stretch is read
    QElapsedTimer age_;
    StretchLoader loader_;  // the last member: its read is cancelled first
};

}  // namespace nanscope
