// RunFile: the reader. Every query of one call runs in one read transaction, so a writer's
// commit in between never shows half a step.
#include "nanscope/run_file.h"

#include "nanscope/health_kinds.h"

#include "record/chunk_rows.h"
#include "record/run_file_checks.h"
#include "record/run_file_json.h"
#include "record/run_file_schema.h"
#include "record/step_columns.h"
#include "record/sqlite_db.h"

#include <sys/stat.h>

#include <cstdio>
#include <map>

namespace nanscope {

namespace {

std::int64_t sizeOf(const std::string &path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? std::int64_t(st.st_size) : 0;
}

Json parsed(const std::string &text)
{
    return text.empty() ? Json() : Json::parse(text, nullptr, false);
}

// Read transactions: a snapshot of the file for the duration of one call.
class ReadTransaction {
public:
    explicit ReadTransaction(record::Database &db) : db_(db) { db_.exec("BEGIN"); }
    ~ReadTransaction()
    {
        try {
            db_.exec("COMMIT");
        } catch (const RunFileError &) {
        }
    }

private:
    record::Database &db_;
};

}  // namespace

double RunFileStats::bytesPerLayerStep() const
{
    return steps > 0 && layers > 0 ? double(fileBytes) / (double(steps) * double(layers)) : 0.0;
}

struct RunFile::Impl {
    std::string path;
    std::unique_ptr<record::Database> db;
    RunFileInfo info;
    std::vector<Layer> layers;
    bool hasChunks = false;
    bool hasCoarseChunks = false;

    void readRunRow();
};

RunFile::RunFile(const std::string &path) : d_(std::make_unique<Impl>())
{
    d_->path = path;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw RunFileError(path + ": no such file");
    if (S_ISDIR(st.st_mode))
        throw RunFileError(path + ": is a folder, not a run file");
    if (st.st_size == 0)
        throw RunFileError(path + ": the file is empty, not a run file");
    d_->db = std::make_unique<record::Database>(path, record::Database::Mode::ReadOnly);
    record::Database &db = *d_->db;
    ReadTransaction t(db);
    if (db.singleInt("PRAGMA application_id") != record::kRunFileApplicationId)
        throw RunFileError(path + ": not a NaNScope run file");
    const std::int64_t version = db.singleInt("PRAGMA user_version");
    if (version > kRunFileFormatVersion)
        throw RunFileError(path + ": written by a newer NaNScope (run file format " + std::to_string(version) +
                           "; this one reads up to " + std::to_string(kRunFileFormatVersion) + ")");
    if (version < 1)
        throw RunFileError(path + ": not a NaNScope run file (no format version)");
    d_->layers = record::readCheckedLayers(db, path);  // first: the summary names layers
    d_->readRunRow();
    d_->hasChunks = record::hasChunkTables(db);
    d_->hasCoarseChunks = record::hasChunkTables(db, record::ChunkLevel::Coarse);
    record::checkStepColumns(db, path, int(version));
    record::checkStepNumbers(db, path);
}

RunFile::~RunFile() = default;

void RunFile::Impl::readRunRow()
{
    record::Statement s = db->prepare(
        "SELECT format_version, nanscope_version, libtorch_version, created, scenario, model_path, model_sha256, "
        "device, precision, seed, config, summary, heartbeat FROM run");
    if (!s.step())
        throw RunFileError(path + ": holds no run yet (its writer has not started the run)");
    info.formatVersion = int(s.integer(0));
    info.nanscopeVersion = s.text(1);
    info.libtorchVersion = s.text(2);
    info.created = s.text(3);
    info.scenario = s.text(4);
    info.modelPath = s.text(5);
    info.modelSha256 = s.text(6);
    info.device = s.text(7);
    info.precision = s.text(8);
    info.seed = std::uint64_t(s.integer(9));
    info.configText = s.text(10);
    info.config = record::configFrom(parsed(info.configText));
    info.finished = !s.isNull(11);
    info.heartbeat = s.integer(12);
    info.rank = info.config.parallel.rank;
    info.worldSize = info.config.parallel.world;
    // Files written before the columns existed say it in their config alone.
    if (db->singleInt("SELECT count(*) FROM pragma_table_info('run') WHERE name IN ('rank', 'world_size')") == 2) {
        record::Statement job = db->prepare("SELECT rank, world_size FROM run");
        if (job.step() && !job.isNull(0) && !job.isNull(1)) {
            info.rank = int(job.integer(0));
            info.worldSize = int(job.integer(1));
        }
    }
    // Files before version 3 keep every step's layers.
    if (db->singleInt("SELECT count(*) FROM pragma_table_info('run') WHERE name = 'keep'") == 1) {
        record::Statement keep = db->prepare("SELECT keep FROM run");
        if (keep.step() && !keep.isNull(0))
            info.keep = record::keepFrom(parsed(keep.text(0)), &info.keepSampleEvery);
    }
    if (info.finished) {
        info.summary = summaryFrom(parsed(s.text(11)), layers);
        info.summary.finished = true;
    }
}

const std::string &RunFile::path() const { return d_->path; }
const RunFileInfo &RunFile::info() const { return d_->info; }
const std::vector<Layer> &RunFile::layers() const { return d_->layers; }

void RunFile::refresh()
{
    ReadTransaction t(*d_->db);
    d_->readRunRow();
}

RunFileStats RunFile::stats() const
{
    ReadTransaction t(*d_->db);
    RunFileStats st;
    record::Statement s = d_->db->prepare("SELECT count(*), min(step), max(step) FROM steps");
    if (s.step() && s.integer(0) > 0) {
        st.steps = s.integer(0);
        st.firstStep = int(s.integer(1));
        st.lastStep = int(s.integer(2));
    }
    st.layers = int(d_->layers.size());
    st.fileBytes = sizeOf(d_->path) + sizeOf(d_->path + "-wal");
    return st;
}

std::vector<StepRecordPtr> RunFile::readSteps(int afterStep, int maxCount, bool withLayers, int run) const
{
    record::Database &db = *d_->db;
    ReadTransaction t(db);
    std::vector<std::shared_ptr<StepRecord>> out;
    std::map<int, StepRecord *> byStep;
    record::StepSelect steps(db);
    steps.start(afterStep, maxCount);
    const record::StepReadContext context{d_->layers, parsePrecision(d_->info.precision).value_or(Precision::FP32)};
    for (;;) {
        auto r = std::make_shared<StepRecord>();
        if (!steps.next(*r, context))
            break;
        r->run = run;
        byStep[r->step] = r.get();
        out.push_back(std::move(r));
    }
    if (withLayers && !out.empty()) {
        const int first = out.front()->step, last = out.back()->step;
        const std::int64_t count = std::int64_t(d_->layers.size());
        record::Statement l = db.prepare("SELECT * FROM layer_steps WHERE key BETWEEN ? AND ? ORDER BY key");
        l.bind(1, record::layerStepKey(first, 0, count)).bind(2, record::layerStepKey(last, count - 1, count));
        while (count > 0 && l.step()) {
            const std::int64_t key = l.integer(0);
            const auto it = byStep.find(int(key / count));
            const std::int64_t layer = key % count;
            if (it == byStep.end() || layer < 0)
                continue;  // a row of a step not read: nothing to attach it to
            std::vector<LayerHealth> &layers = it->second->layers;
            if (layers.size() < d_->layers.size())
                layers.resize(d_->layers.size());
            LayerHealth &lh = layers[std::size_t(layer)];
            lh.inputFinite = l.integer(1) != 0;
            for (const HealthKindInfo &k : kHealthKinds)  // numel, min, max, norm of each kind from column 2
                lh.*k.member = record::readHealthValues(l, 2 + 4 * int(k.kind), record::Range::Compact);
            if (l.columnCount() > 18)  // a file of the first release has no update ratios
                lh.updateRatio = l.real(18);
        }
        record::Statement n =
            db.prepare("SELECT step, layer, kind, nan, posinf, neginf FROM layer_nonfinite WHERE step BETWEEN ? AND ?");
        n.bind(1, first).bind(2, last);
        while (n.step()) {
            const auto it = byStep.find(int(n.integer(0)));
            const std::int64_t layer = n.integer(1);
            if (it == byStep.end() || layer < 0 || layer >= std::int64_t(it->second->layers.size()))
                continue;
            LayerHealth &lh = it->second->layers[std::size_t(layer)];
            if (const HealthKindInfo *kind = healthKindWithId(n.text(2)))
                record::readCounts(n, 3, lh.*kind->member);
        }
    }
    return {out.begin(), out.end()};
}

int RunFile::lastStep() const
{
    ReadTransaction t(*d_->db);
    record::Statement s = d_->db->prepare("SELECT max(step) FROM steps");
    return s.step() && !s.isNull(0) ? int(s.integer(0)) : -1;
}

std::vector<StepChunkPtr> RunFile::readChunks(int afterChunk, int beforeChunk, int maxCount, int run) const
{
    ReadTransaction t(*d_->db);
    if (!d_->hasChunks)
        return {};
    return record::readChunks(*d_->db, afterChunk, beforeChunk, maxCount, d_->layers, run);
}

std::vector<StepChunkPtr> RunFile::readCoarseChunks(int afterCoarse, int beforeCoarse, int maxCount, int run) const
{
    ReadTransaction t(*d_->db);
    if (!d_->hasCoarseChunks)
        return {};
    return record::readChunks(*d_->db, afterCoarse, beforeCoarse, maxCount, d_->layers, run,
                              record::ChunkLevel::Coarse);
}

std::vector<Event> RunFile::readEvents(std::int64_t afterId, std::int64_t *lastId) const
{
    record::Database &db = *d_->db;
    ReadTransaction t(db);
    std::vector<Event> out;
    std::map<std::int64_t, std::size_t> byId;
    // Files written before events had a message (or by the Python recorder) say only their text.
    const bool messages = db.singleInt("SELECT count(*) FROM pragma_table_info('events') WHERE name = 'message'") == 1;
    record::Statement s = db.prepare(std::string("SELECT id, step, kind, layer, text, origin, ") +
                                     (messages ? "message" : "NULL") + " FROM events WHERE id > ? ORDER BY id");
    s.bind(1, afterId);
    std::int64_t newest = afterId;
    while (s.step()) {
        Event e(eventKindFromId(s.text(2)), int(s.integer(1)), s.isNull(3) ? -1 : int(s.integer(3)), s.text(4));
        if (!s.isNull(5))
            e.origin = originFrom(parsed(s.text(5)), d_->layers);
        if (!s.isNull(6)) {
            const Json m = parsed(s.text(6));
            if (m.is_object()) {
                e.message.id = record::jsonValue<std::string>(m, "id", "");
                e.message.args = record::jsonValue<std::vector<std::string>>(m, "args", {});
            }
        }
        newest = s.integer(0);
        byId[newest] = out.size();
        out.push_back(std::move(e));
    }
    if (!out.empty()) {
        record::Statement c =
            db.prepare("SELECT event, control, old, new FROM control_changes WHERE event > ? ORDER BY rowid");
        c.bind(1, afterId);
        while (c.step()) {
            const auto it = byId.find(c.integer(0));
            if (it != byId.end())
                out[it->second].changes.push_back({c.text(1), c.text(2), c.text(3)});
        }
    }
    if (lastId)
        *lastId = newest;
    return out;
}

void copyRunFile(const std::string &from, const std::string &to)
{
    RunFile check(from);  // a copy of something that is not a run file would only fail later
    std::remove(to.c_str());
    record::Database db(from, record::Database::Mode::ReadOnly);
    record::Statement s = db.prepare("VACUUM INTO ?");
    s.bind(1, to);
    try {
        s.run();
    } catch (const RunFileError &e) {
        throw RunFileError(to + ": cannot write the copy (" + e.what() + ")");
    }
}

StepRecordPtr withChunkLayers(const RunFile &file, const StepRecordPtr &record, StepChunkPtr *cache)
{
    if (record->layerDetail != LayerDetail::None)
        return record;
    StepChunkPtr local;
    StepChunkPtr &chunk = cache ? *cache : local;
    const int index = chunkOfStep(record->step);
    if (!chunk || chunk->index != index || chunk->lastStep < record->step) {  // a chunk read while it filled
        const std::vector<StepChunkPtr> read = file.readChunks(index - 1, index + 1, 1, record->run);
        if (read.empty() || read.front()->index != index)
            return record;
        chunk = read.front();
    }
    auto filled = std::make_shared<StepRecord>(*record);
    filled->layers = layersFromChunk(*chunk);
    return filled;
}

}  // namespace nanscope
