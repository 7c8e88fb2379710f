#include "record/run_file_replace.h"

#include "record/run_file_schema.h"

#include "nanscope/run_file.h"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

namespace nanscope::record {

namespace {

struct Header {
    bool sqlite = false;
    std::uint32_t applicationId = 0;
    std::uint32_t userVersion = 0;
};

std::uint32_t bigEndian(const unsigned char *at)
{
    return std::uint32_t(at[0]) << 24 | std::uint32_t(at[1]) << 16 | std::uint32_t(at[2]) << 8 | std::uint32_t(at[3]);
}

// SQLite's file header (https://www.sqlite.org/fileformat.html): the magic string, the user
// version at offset 60 and the application id at offset 68, both big-endian.
Header readHeader(const std::string &path)
{
    std::array<unsigned char, 100> bytes{};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char *>(bytes.data()), std::streamsize(bytes.size()));
    Header h;
    h.sqlite = in.gcount() == std::streamsize(bytes.size()) && std::memcmp(bytes.data(), "SQLite format 3", 16) == 0;
    if (h.sqlite) {
        h.userVersion = bigEndian(&bytes[60]);
        h.applicationId = bigEndian(&bytes[68]);
    }
    return h;
}

void removeJournals(const std::string &path)
{
    for (const char *suffix : {"-wal", "-shm", "-journal"})
        std::remove((path + suffix).c_str());
}

void removeWithJournals(const std::string &path)
{
    std::remove(path.c_str());
    removeJournals(path);
}

}  // namespace

void refuseToReplace(const std::string &path, bool overwrite)
{
    struct stat st {};
    if (overwrite || ::stat(path.c_str(), &st) != 0)
        return;  // nothing there (or replacing it was asked for)
    if (S_ISDIR(st.st_mode))
        throw RunFileError(path + " is a folder, not a run file");
    if (st.st_size == 0)
        return;  // an empty file holds nothing to lose
    const Header h = readHeader(path);
    if (!h.sqlite || h.applicationId != std::uint32_t(kRunFileApplicationId))
        throw RunFileError(path + " exists and is not a NaNScope run file: not replaced (to replace it on purpose: "
                                  "--overwrite)");
    if (h.userVersion > std::uint32_t(kRunFileFormatVersion))
        throw RunFileError(path + " is a run file of a newer NaNScope (format " + std::to_string(h.userVersion) +
                           "; this one writes " + std::to_string(kRunFileFormatVersion) +
                           "): not replaced (to replace it on purpose: --overwrite)");
}

void createRunFile(const std::string &path)
{
    const std::string fresh = path + ".new";
    removeWithJournals(fresh);
    try {
        Database db(fresh, Database::Mode::Create);
        db.exec("PRAGMA journal_mode = WAL");  // kept in the header: the file opens in WAL mode
        db.exec("PRAGMA application_id = " + std::to_string(kRunFileApplicationId));
        db.exec("PRAGMA user_version = " + std::to_string(kRunFileFormatVersion));
        db.exec("BEGIN");
        createSchema(db);
        db.exec("COMMIT");
    } catch (const RunFileError &e) {
        removeWithJournals(fresh);
        // Named by the path the user gave, not the file beside it.
        std::string why = e.what();
        if (why.rfind(fresh + ": ", 0) == 0)
            why.erase(0, fresh.size() + 2);
        throw RunFileError(path + ": " + why);
    }
    if (std::rename(fresh.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        removeWithJournals(fresh);
        throw RunFileError("cannot write " + path + ": " + why);
    }
    removeJournals(path);  // the replaced file's: another database's
}

}  // namespace nanscope::record
