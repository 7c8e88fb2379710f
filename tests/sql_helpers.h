#pragma once
// Plain SQL on a run file, as a user's own tools would run it: a statement that changes it (an
// earlier layout, a cut-short run) and one number read from it.
#include <sqlite3.h>

#include <QString>

#include <cstdint>

namespace nanscope::testing {

// Runs `sql` on the file; empty on success, else SQLite's message.
inline QString execSql(const QString &path, const QString &sql)
{
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        sqlite3_close(db);
        return QStringLiteral("cannot open");
    }
    char *message = nullptr;
    const int rc = sqlite3_exec(db, sql.toUtf8().constData(), nullptr, nullptr, &message);
    const QString error = rc == SQLITE_OK ? QString() : QString::fromUtf8(message);
    sqlite3_free(message);
    sqlite3_close(db);
    return error;
}

// The first column of the first row of `sql`, read-only; -1 when there is none.
inline std::int64_t sqlNumber(const QString &path, const QString &sql)
{
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt *s = nullptr;
    std::int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql.toUtf8().constData(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

}  // namespace nanscope::testing
