// RunWriter: the SQL of each kind of item a recorder writes.
#include "record/run_writer.h"

#include "nanscope/health_kinds.h"

#include "record/chunk_rows.h"
#include "record/run_file_json.h"
#include "nanscope/version.h"
#include "record/run_file_schema.h"
#include "nanscope/run_recorder.h"

#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>

namespace nanscope::record {

namespace {

std::string utcNow()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

RunWriter::RunWriter(Database &db, KeepPolicy keep) : db_(db), retention_(keep) {}

RunWriter::~RunWriter() = default;

void RunWriter::heartbeat() { db_.exec("UPDATE run SET heartbeat = heartbeat + 1"); }

void RunWriter::start(const std::vector<Layer> &layers, const RunConfig &c)
{
    const Controls controls = initialControls(c);
    Statement run = db_.prepare(
        "INSERT INTO run (format_version, nanscope_version, libtorch_version, created, scenario, model_path, "
        "model_sha256, device, precision, seed, config, controls, rank, world_size, keep) VALUES "
        "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    run.bind(1, kRunFileFormatVersion)
        .bind(2, std::string(nanscopeVersion()))
        .bind(3, std::string(libtorchVersion()))
        .bind(4, utcNow())
        .bindText(5, c.usesModelFile() ? std::string() : c.scenario)
        .bindText(6, c.modelPath)
        .bindText(7, c.usesModelFile() ? fileSha256(c.modelPath) : std::string())
        .bind(8, c.device)
        .bind(9, std::string(precisionName(controls.precision)))
        .bind(10, std::int64_t(c.seed))
        .bind(11, configJson(c, controls, stepsToRun(c)).dump())
        .bind(12, controlsJson(controls).dump());
    if (c.parallel.active())  // in columns too, so that SQL finds a job's ranks without parsing JSON
        run.bind(13, c.parallel.rank).bind(14, c.parallel.world);
    else
        run.bindNull(13).bindNull(14);
    run.bind(15, keepJson(retention_.policy(), retention_.sampleEvery()).dump());
    run.run();
    modelPath_ = c.modelPath;
    layerCount_ = std::int64_t(layers.size());
    layers_ = layers;
    Statement layer = db_.prepare("INSERT INTO layers (id, path, type, parent) VALUES (?,?,?,?)");
    for (const Layer &l : layers) {
        layer.bind(1, l.id).bind(2, l.path).bind(3, l.type);
        if (l.parent >= 0)
            layer.bind(4, l.parent);
        else
            layer.bindNull(4);
        layer.run();
    }
}

void RunWriter::step(const StepRecordPtr &record)
{
    const StepRecord &r = *record;
    if (!insertStep_) {  // prepared once, on the writer thread
        insertStep_ = std::make_unique<StepInsert>(db_);
        insertLayer_ = std::make_unique<Statement>(
            db_.prepare("INSERT OR REPLACE INTO layer_steps VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
        insertNonFinite_ =
            std::make_unique<Statement>(db_.prepare("INSERT OR REPLACE INTO layer_nonfinite VALUES (?,?,?,?,?,?)"));
        setDetail_ = std::make_unique<Statement>(db_.prepare("UPDATE steps SET layer_detail = ? WHERE step = ?"));
    }
    const int chunk = chunkOfStep(r.step);
    if (chunk != chunk_.index) {
        if (chunk_.tally.steps > 0) {
            chunkDone();
            stayWithinBudget();
        }
        chunk_ = StepChunk(chunk, std::size_t(layerCount_));
        chunkStepsWritten_ = 0;
    }
    chunk_.add(r);  // every step, kept in full or not: the chunk is what the file keeps of the rest

    std::vector<LayerDetailRetention::Decision> decisions = retention_.step(record);
    insertStep_->run(r, decisions.back().detail);
    keep(decisions, &r);
}

void RunWriter::keep(const std::vector<LayerDetailRetention::Decision> &decisions, const StepRecord *inserted)
{
    for (const LayerDetailRetention::Decision &d : decisions) {
        if (d.detail == LayerDetail::None)
            continue;
        if (d.record.get() != inserted)  // a step written before, without its layers or as a sample
            setDetail_->bindText(1, layerDetailId(d.detail)).bind(2, d.record->step).run();
        if (!d.relabelOnly)
            writeLayers(*d.record);
    }
}

void RunWriter::writeLayers(const StepRecord &r)
{
    Statement *layer = insertLayer_.get(), *nonFinite = insertNonFinite_.get();
    for (std::size_t i = 0; i < r.layers.size() && std::int64_t(i) < layerCount_; ++i) {
        const LayerHealth &lh = r.layers[i];
        layer->bind(1, layerStepKey(r.step, std::int64_t(i), layerCount_)).bind(2, int(lh.inputFinite));
        for (const HealthKindInfo &k : kHealthKinds) {
            const TensorHealth &h = lh.*k.member;
            bindHealthValues(*layer, 3 + 4 * int(k.kind), h, Range::Compact);
            if (h.hasNonFinite()) {
                nonFinite->bind(1, r.step).bind(2, std::int64_t(i));
                nonFinite->bind(3, std::string(k.id));
                bindCounts(*nonFinite, 4, h);
                nonFinite->run();
            }
        }
        if (!std::isnan(lh.updateRatio))
            layer->bind(19, lh.updateRatio);
        layer->run();
    }
}

void RunWriter::event(const Event &e)
{
    Statement s = db_.prepare("INSERT INTO events (step, kind, layer, text, origin, message) VALUES (?,?,?,?,?,?)");
    s.bind(1, e.step).bind(2, std::string(eventKindId(e.kind)));
    if (e.layer >= 0)
        s.bind(3, e.layer);
    s.bind(4, e.text);
    if (e.origin.valid())
        s.bind(5, originJson(e.origin).dump());
    if (!e.message.empty())
        s.bind(6, Json{{"id", e.message.id}, {"args", e.message.args}}.dump());
    s.run();
    const std::int64_t id = db_.singleInt("SELECT last_insert_rowid()");
    Statement change = db_.prepare("INSERT INTO control_changes (event, step, control, old, new) VALUES (?,?,?,?,?)");
    for (const ControlChange &c : e.changes) {
        change.bind(1, id).bind(2, e.step).bind(3, c.control).bind(4, c.before).bind(5, c.after);
        change.run();
    }
    if (setDetail_)  // else no step has come yet, so none waits
        keep(retention_.event(e.kind, e.step), nullptr);
}

void RunWriter::stayWithinBudget()
{
    const KeepPolicy &policy = retention_.policy();
    const auto usedBytes = [this] {
        return (db_.singleInt("PRAGMA page_count") - db_.singleInt("PRAGMA freelist_count")) *
               db_.singleInt("PRAGMA page_size");
    };
    // Once a chunk: the next chunk boundary thins again if the file is still over its budget.
    if (policy.keepAll || usedBytes() <= policy.budgetBytes || !retention_.thin())
        return;
    const int every = retention_.sampleEvery();
    std::vector<std::int64_t> dropped;
    Statement sampled = db_.prepare("SELECT step FROM steps WHERE layer_detail = 'sample' AND step % ? != 0");
    sampled.bind(1, every);
    while (sampled.step())
        dropped.push_back(sampled.integer(0));
    Statement drop = db_.prepare("DELETE FROM layer_steps WHERE key BETWEEN ? AND ?");
    for (const std::int64_t step : dropped) {
        drop.bind(1, layerStepKey(step, 0, layerCount_)).bind(2, layerStepKey(step, layerCount_ - 1, layerCount_)).run();
        setDetail_->bindText(1, layerDetailId(LayerDetail::None)).bind(2, step).run();
    }
    Statement policyRow = db_.prepare("UPDATE run SET keep = ?");
    policyRow.bind(1, keepJson(policy, every).dump()).run();
}

void RunWriter::capsule(const CapsuleBlob &c)
{
    if (setDetail_)  // replay compares the step with its layers: keep them
        keep(retention_.keepStep(c.step, LayerDetail::Capsule), nullptr);
    if (!modelPath_.empty() && embeddedSha_.empty()) {
        std::ifstream in(modelPath_, std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        const std::string sha = fileSha256(modelPath_);
        if (in && !sha.empty()) {  // else replay says the model is not embedded
            Statement embed =
                db_.prepare("INSERT OR IGNORE INTO embedded_files (sha256, name, bytes, data) VALUES (?,?,?,?)");
            const std::string data = bytes.str();
            const auto slash = modelPath_.find_last_of('/');
            embed.bind(1, sha)
                .bind(2, slash == std::string::npos ? modelPath_ : modelPath_.substr(slash + 1))
                .bind(3, std::int64_t(data.size()))
                .bindBlob(4, data)
                .run();
            embeddedSha_ = sha;
        }
    }
    Statement insert = db_.prepare("INSERT OR REPLACE INTO capsules (step, reason, snapshot_step, bytes, meta, state, "
                                   "model_sha256) VALUES (?,?,?,?,?,?,?)");
    insert.bind(1, c.step)
        .bind(2, c.reason)
        .bind(4, std::int64_t(c.meta.size() + c.state.size()))
        .bind(5, c.meta)
        .bindBlob(6, c.state)
        .bindText(7, embeddedSha_);
    if (c.snapshotStep >= 0)
        insert.bind(3, c.snapshotStep);
    else
        insert.bindNull(3);
    insert.run();
}

// The chunk is complete: its rows, and its fold into the coarse chunk, whose rows are written once
// a chunk of the next coarse chunk is done (or the run ends).
void RunWriter::chunkDone()
{
    writeChunk(db_, chunk_);
    chunkStepsWritten_ = chunk_.tally.steps;
    const int group = chunk_.index / kCoarseChunkChunks;
    if (coarse_.tally.steps > 0 && coarse_.index != group) {
        writeChunk(db_, coarse_, ChunkLevel::Coarse);
        coarse_ = StepChunk();
    }
    if (coarse_.tally.steps == 0)
        coarse_ = StepChunk(group, std::size_t(layerCount_));
    coarse_.fold(chunk_);
}

void RunWriter::batchDone()
{
    if (chunk_.tally.steps > 0 && chunk_.tally.steps != chunkStepsWritten_) {
        writeChunk(db_, chunk_);
        chunkStepsWritten_ = chunk_.tally.steps;
    }
}

void RunWriter::finish(const RunSummary &s)
{
    if (chunk_.tally.steps > 0)
        chunkDone();
    if (coarse_.tally.steps > 0)
        writeChunk(db_, coarse_, ChunkLevel::Coarse);
    Statement u = db_.prepare("UPDATE run SET summary = ?, finished = ?");
    u.bind(1, summaryJson(s, layers_).dump()).bind(2, utcNow());
    u.run();
}

}  // namespace nanscope::record
