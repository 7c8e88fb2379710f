// Reading capsules and embedded files from a run file (the `capsules` and `embedded_files` tables).
#include "nanscope/capsule_file.h"

#include "nanscope/run_file.h"
#include "record/sqlite_db.h"

namespace nanscope {

namespace {

bool hasCapsuleTables(record::Database &db)
{
    return db.singleInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN "
                        "('capsules', 'embedded_files')") == 2;
}

std::string stepList(const std::vector<CapsuleEntry> &entries)
{
    std::string s;
    for (const CapsuleEntry &e : entries)
        s += (s.empty() ? "" : ", ") + std::to_string(e.step);
    return s;
}

}  // namespace

std::vector<CapsuleEntry> runFileCapsules(const std::string &path)
{
    RunFile check(path);  // a clear message for what is not a run file
    record::Database db(path, record::Database::Mode::ReadOnly);
    std::vector<CapsuleEntry> out;
    if (!hasCapsuleTables(db))
        return out;
    record::Statement s =
        db.prepare("SELECT step, reason, snapshot_step, bytes, model_sha256 FROM capsules ORDER BY step");
    while (s.step()) {
        CapsuleEntry e;
        e.step = int(s.integer(0));
        e.reason = s.text(1);
        e.snapshotStep = s.isNull(2) ? -1 : int(s.integer(2));
        e.bytes = s.integer(3);
        e.modelSha256 = s.text(4);
        out.push_back(e);
    }
    return out;
}

CapsuleBlob readCapsule(const std::string &path, int step)
{
    RunFile check(path);  // a clear message for what is not a run file
    record::Database db(path, record::Database::Mode::ReadOnly);
    if (hasCapsuleTables(db)) {
        record::Statement s = db.prepare("SELECT reason, snapshot_step, meta, state FROM capsules WHERE step = ?");
        s.bind(1, step);
        if (s.step()) {
            CapsuleBlob b;
            b.step = step;
            b.reason = s.text(0);
            b.snapshotStep = s.isNull(1) ? -1 : int(s.integer(1));
            b.meta = s.text(2);
            b.state = s.blob(3);
            return b;
        }
    }
    const std::vector<CapsuleEntry> entries = runFileCapsules(path);
    throw RunFileError(path + ": no capsule of step " + std::to_string(step) +
                       (entries.empty() ? std::string(" (the file holds none)")
                                        : " (the file holds capsules of step " + stepList(entries) + ")"));
}

std::string readEmbeddedFile(const std::string &path, const std::string &sha256)
{
    record::Database db(path, record::Database::Mode::ReadOnly);
    if (sha256.empty() || !hasCapsuleTables(db))
        return {};
    record::Statement s = db.prepare("SELECT data FROM embedded_files WHERE sha256 = ?");
    s.bind(1, sha256);
    return s.step() ? s.blob(0) : std::string();
}

int defaultCapsuleStep(const std::vector<CapsuleEntry> &capsules)
{
    for (const CapsuleEntry &c : capsules)
        if (c.reason == kCapsuleFirstNonFinite)
            return c.step;
    return capsules.empty() ? -1 : capsules.front().step;
}

}  // namespace nanscope
