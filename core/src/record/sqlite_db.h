#pragma once
// A thin RAII wrapper over SQLite's C API: a connection and its prepared statements. Failures
// throw RunFileError naming the file, with SQLite's own message as the cause.
#include "nanscope/run_file.h"

#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace nanscope::record {

class Statement;

class Database {
public:
    enum class Mode {
        Create,    // a new file, read-write (an existing one is replaced by the caller first)
        ReadOnly,  // someone's run file: never written, defensive, no extensions, untrusted schema
    };
    Database(const std::string &path, Mode mode);
    ~Database();
    Database(const Database &) = delete;
    Database &operator=(const Database &) = delete;

    void exec(const std::string &sql);
    Statement prepare(const std::string &sql);
    std::int64_t singleInt(const std::string &sql);  // the first column of the first row
    const std::string &path() const { return path_; }
    [[noreturn]] void fail(const std::string &what) const;  // throws with SQLite's last message

private:
    friend class Statement;
    sqlite3 *db_ = nullptr;
    std::string path_;
};

class Statement {
public:
    Statement(Database &db, const std::string &sql);
    ~Statement();
    Statement(Statement &&other) noexcept;
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;
    Statement &operator=(Statement &&) = delete;

    // Parameters count from 1, as in SQLite.
    Statement &bind(int i, double v);
    Statement &bind(int i, std::int64_t v);
    Statement &bind(int i, int v) { return bind(i, std::int64_t(v)); }
    Statement &bind(int i, const std::string &v);
    Statement &bindBlob(int i, const std::string &bytes);
    Statement &bindNull(int i);
    Statement &bindText(int i, const std::string &v);  // NULL for an empty text
    Statement &bindOptional(int i, const std::optional<double> &v);

    bool step();  // true while a row is there
    void run();   // steps to the end and resets
    void reset();

    // Columns count from 0. A file written by an older version may have fewer of them.
    int columnCount() const;
    bool isNull(int i) const;
    bool isInteger(int i) const;
    double real(int i) const;  // NULL reads as NaN (SQLite stores a NaN REAL as NULL)
    std::int64_t integer(int i) const;
    std::string text(int i) const;  // NULL reads as ""
    std::string blob(int i) const;  // NULL reads as ""

private:
    Database *db_;
    sqlite3_stmt *stmt_ = nullptr;
};

}  // namespace nanscope::record
