#include "window/stretch_loader.h"

#include "nanscope/run_file.h"

namespace nanscope {

StretchLoader::StretchLoader(QObject *parent) : QObject(parent) {}

bool StretchLoader::wants(int first, int last) const
{
    return first == wantFirst_ && last == wantLast_ && (loading_ || store_);
}

void StretchLoader::clear()
{
    job_.cancel();
    loading_ = false;
    wantFirst_ = wantLast_ = first_ = last_ = -1;
    store_.reset();
}

void StretchLoader::request(const QString &path, std::shared_ptr<RunStore> store, int first, int last)
{
    loading_ = true;
    wantFirst_ = first;
    wantLast_ = last;
    const StretchLevel level = stretchLevel(last - first + 1, store->layers().size());
    job_.start([this, path = path.toStdString(), store = std::move(store), first, last, level](
                   const std::atomic<bool> &cancelled, const BackgroundJob::Post &) -> BackgroundJob::Delivery {
        try {
            const RunFile file(path);
            if (!readStretch(file, *store, first, last, level, [&cancelled] { return cancelled.load(); }))
                return {};  // cancelled
        } catch (const std::exception &e) {
            return [this, error = QString::fromStdString(e.what())] {
                loading_ = false;
                Q_EMIT failed(error);
            };
        }
        return [this, store, first, last, level] {
            loading_ = false;
            store_ = store;
            first_ = first;
            last_ = last;
            level_ = level;
            Q_EMIT loaded();
        };
    });
}

}  // namespace nanscope
