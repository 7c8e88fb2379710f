#include "record/sqlite_db.h"

#include <sqlite3.h>

#include <cmath>
#include <limits>

namespace nanscope::record {

namespace {

// Plain words for the failures a user meets; SQLite's own message otherwise.
std::string cause(sqlite3 *db, int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOTADB: return "not a NaNScope run file (not an SQLite database)";
    case SQLITE_CORRUPT: return "the file is damaged (" + std::string(sqlite3_errmsg(db)) + ")";
    case SQLITE_FULL: return "the disk is full";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "locked by another process";
    case SQLITE_CANTOPEN: return "cannot open the file (" + std::string(sqlite3_errmsg(db)) + ")";
    case SQLITE_READONLY: return "the file or its folder is read-only";
    case SQLITE_IOERR: return "input/output error (" + std::string(sqlite3_errmsg(db)) + ")";
    default: return db ? std::string(sqlite3_errmsg(db)) : std::string(sqlite3_errstr(rc));
    }
}

}  // namespace

Database::Database(const std::string &path, Mode mode) : path_(path)
{
    const int flags = mode == Mode::Create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    const int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        const std::string why = cause(db_, rc);
        sqlite3_close(db_);
        db_ = nullptr;
        throw RunFileError(path + ": " + why);
    }
    sqlite3_extended_result_codes(db_, 1);
    // A reader waits a little for a writer's lock before saying the file is locked.
    sqlite3_busy_timeout(db_, 2000);
    if (mode == Mode::ReadOnly) {
        // The file may come from anyone: nothing in it can run code, load a library or be
        // trusted to be well formed.
        sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
        sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
        sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
        sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
        exec("PRAGMA cell_size_check = ON");
        exec("PRAGMA mmap_size = 0");
    }
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::fail(const std::string &what) const
{
    const int rc = sqlite3_extended_errcode(db_);
    throw RunFileError(path_ + ": " + cause(db_, rc) + (what.empty() ? "" : " (" + what + ")"));
}

void Database::exec(const std::string &sql)
{
    char *message = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    sqlite3_free(message);
    if (rc != SQLITE_OK)
        fail({});
}

Statement Database::prepare(const std::string &sql) { return Statement(*this, sql); }

std::int64_t Database::singleInt(const std::string &sql)
{
    Statement s(*this, sql);
    return s.step() ? s.integer(0) : 0;
}

Statement::Statement(Database &db, const std::string &sql) : db_(&db)
{
    if (sqlite3_prepare_v2(db.db_, sql.c_str(), int(sql.size()), &stmt_, nullptr) != SQLITE_OK)
        db.fail({});
}

Statement::Statement(Statement &&other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement &Statement::bind(int i, double v)
{
    sqlite3_bind_double(stmt_, i, v);  // NaN is stored as NULL by SQLite itself
    return *this;
}

Statement &Statement::bind(int i, std::int64_t v)
{
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
}

Statement &Statement::bind(int i, const std::string &v)
{
    sqlite3_bind_text(stmt_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
}

Statement &Statement::bindBlob(int i, const std::string &bytes)
{
    // SQLITE_STATIC would do for a caller that keeps `bytes`, but a capsule can be large and
    // a statement can outlive a temporary: copy.
    sqlite3_bind_blob64(stmt_, i, bytes.data(), sqlite3_uint64(bytes.size()), SQLITE_TRANSIENT);
    return *this;
}

Statement &Statement::bindNull(int i)
{
    sqlite3_bind_null(stmt_, i);
    return *this;
}

Statement &Statement::bindText(int i, const std::string &v) { return v.empty() ? bindNull(i) : bind(i, v); }

Statement &Statement::bindOptional(int i, const std::optional<double> &v) { return v ? bind(i, *v) : bindNull(i); }

bool Statement::step()
{
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    sqlite3_reset(stmt_);
    db_->fail({});
}

void Statement::run()
{
    while (step()) {
    }
    reset();
}

void Statement::reset()
{
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

bool Statement::isNull(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

int Statement::columnCount() const { return sqlite3_column_count(stmt_); }

bool Statement::isInteger(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_INTEGER; }

double Statement::real(int i) const
{
    return isNull(i) ? std::numeric_limits<double>::quiet_NaN() : sqlite3_column_double(stmt_, i);
}

std::int64_t Statement::integer(int i) const { return sqlite3_column_int64(stmt_, i); }

std::string Statement::text(int i) const
{
    const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(stmt_, i));
    return p ? std::string(p, std::size_t(sqlite3_column_bytes(stmt_, i))) : std::string();
}

std::string Statement::blob(int i) const
{
    const auto *p = static_cast<const char *>(sqlite3_column_blob(stmt_, i));
    return p ? std::string(p, std::size_t(sqlite3_column_bytes(stmt_, i))) : std::string();
}

}  // namespace nanscope::record
