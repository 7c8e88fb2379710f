#include "record/run_file_checks.h"

#include "nanscope/run_file.h"
#include "record/sqlite_db.h"
#include "record/step_columns.h"

#include <limits>

namespace nanscope::record {

namespace {

RunFileError damaged(const std::string &path, const std::string &fault)
{
    return RunFileError(path + ": the file is damaged (" + fault + ")");
}

// Follows parents from `id` until the top, a parent out of range, or `id` again.
bool isOwnAncestor(const std::vector<std::int64_t> &parents, std::size_t id)
{
    std::int64_t p = parents[id];
    for (std::size_t hops = 0; p >= 0 && std::size_t(p) < parents.size() && hops <= parents.size(); ++hops) {
        if (std::size_t(p) == id)
            return true;
        p = parents[std::size_t(p)];
    }
    return false;
}

}  // namespace

std::vector<Layer> readCheckedLayers(Database &db, const std::string &path)
{
    std::vector<Layer> layers;
    std::vector<std::int64_t> parents;
    std::vector<bool> parentIsNumber;
    Statement s = db.prepare("SELECT id, path, type, parent, typeof(parent) IN ('integer', 'null') "
                             "FROM layers ORDER BY id");
    while (s.step()) {
        if (s.integer(0) != std::int64_t(layers.size()))
            throw damaged(path, "layer ids are not 0, 1, 2, ...");
        Layer l;
        l.id = int(layers.size());
        l.path = s.text(1);
        l.type = s.text(2);
        parents.push_back(s.isNull(3) ? -1 : s.integer(3));
        parentIsNumber.push_back(s.integer(4) != 0);
        layers.push_back(std::move(l));
    }
    // Two passes: a cycle is named as such even where a later parent would also be out of order.
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string layer = "layer " + std::to_string(i);
        if (!parentIsNumber[i])
            throw damaged(path, layer + "'s parent is not a layer id");
        if (parents[i] < -1 || parents[i] >= std::int64_t(layers.size()))
            throw damaged(path, layer + "'s parent " + std::to_string(parents[i]) + " is not a layer");
        if (isOwnAncestor(parents, i))
            throw RunFileError(path + ": " + layer + " is its own ancestor");
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
        if (parents[i] > std::int64_t(i))
            throw damaged(path, "layer " + std::to_string(i) + "'s parent " + std::to_string(parents[i]) +
                                    " is listed after it");
        layers[i].parent = int(parents[i]);
    }
    return layers;
}

void checkStepColumns(Database &db, const std::string &path, int formatVersion)
{
    const std::vector<std::string> missing = missingStepColumns(db, formatVersion);
    if (missing.empty())
        return;
    std::string names;
    for (std::size_t i = 0; i < missing.size() && i < 3; ++i)
        names += (i ? ", " : "") + missing[i];
    if (missing.size() > 3)
        names += " and " + std::to_string(missing.size() - 3) + " more";
    throw damaged(path, std::string("the steps table has no column") + (missing.size() > 1 ? "s " : " ") + names);
}

void checkStepNumbers(Database &db, const std::string &path)
{
    Statement s = db.prepare("SELECT min(step), max(step) FROM steps");
    if (!s.step() || s.isNull(0))
        return;
    if (s.integer(0) < 0)
        throw damaged(path, "step " + std::to_string(s.integer(0)) + " is negative");
    if (s.integer(1) > std::numeric_limits<int>::max())
        throw damaged(path, "step " + std::to_string(s.integer(1)) + " is out of range");
}

}  // namespace nanscope::record
