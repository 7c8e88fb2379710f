#include "window/stretch_loader.h"

#include "nanscope/run_file.h"

namespace nanscope {

StretchLoader::StretchLoader(QObject *parent) : QObject(parent) {}

StretchLoader::~StretchLoader()
{
    ++number_;
    join();
}

void StretchLoader::join()
{
    if (thread_.joinable())
        thread_.join();
}

bool StretchLoader::wants(int first, int last) const
{
    return first == wantFirst_ && last == wantLast_ && (loading_ || store_);
}

void StretchLoader::clear()
{
    ++number_;
    loading_ = false;
    wantFirst_ = wantLast_ = first_ = last_ = -1;
    store_.reset();
}

void StretchLoader::request(const QString &path, std::shared_ptr<RunStore> store, int first, int last)
{
    const int number = ++number_;
    join();  // cancelled at its next read
    loading_ = true;
    wantFirst_ = first;
    wantLast_ = last;
    const StretchLevel level = stretchLevel(last - first + 1, store->layers().size());
    thread_ = std::thread([this, number, path = path.toStdString(), store = std::move(store), first, last, level] {
        QString error;
        bool done = false;
        try {
            const RunFile file(path);
            done = readStretch(file, *store, first, last, level, [this, number] { return number != number_; });
        } catch (const std::exception &e) {
            error = QString::fromStdString(e.what());
        }
        if (!done && error.isEmpty())
            return;  // cancelled
        QMetaObject::invokeMethod(
            this,
            [this, number, store, first, last, level, error] {
                if (number != number_)
                    return;
                loading_ = false;
                if (!error.isEmpty()) {
                    Q_EMIT failed(error);
                    return;
                }
                store_ = store;
                first_ = first;
                last_ = last;
                level_ = level;
                Q_EMIT loaded();
            },
            Qt::QueuedConnection);
    });
}

}  // namespace nanscope
