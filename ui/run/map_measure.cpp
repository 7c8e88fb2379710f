#include "run/map_measure.h"

#include "nanscope/precision.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

// Marks a measure's name for translation (lupdate reads it) without Qt in this room.
#ifndef QT_TRANSLATE_NOOP
#define QT_TRANSLATE_NOOP(context, text) text
#endif

namespace nanscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double log10OrZeroValue(double v) { return v > 0.0 ? std::max(kZeroValue, std::log10(v)) : kZeroValue; }

// Decade ticks between lower and upper, at most `maxTicks`, at a round interval.
void addDecadeTicks(MeasureScale &s, int maxTicks, double keepClearOfTop)
{
    const double span = s.upper - s.lower;
    int interval = 1;
    for (int m : {1, 2, 5, 10, 20, 50})
        if ((interval = m) * (maxTicks - 1) >= span)
            break;
    for (int e = int(std::ceil(s.lower / interval)) * interval; e <= s.upper - keepClearOfTop; e += interval)
        s.ticks.emplace_back(e, decadeLabel(e));
}

}  // namespace

namespace {

// The measures, in the order the map's box offers them: the one place a measure is named. The
// name is the box's text (translated in NanMapView's context), the id the window's --map value.
struct MeasureInfo {
    MapMeasure measure;
    const char *id;
    const char *name;
    bool usesKind;  // false: one value per layer, whatever the map's kind
};

constexpr std::array<MeasureInfo, kMapMeasureCount> kMeasures{{
    {MapMeasure::NonFinite, "nonfinite", QT_TRANSLATE_NOOP("nanscope::NanMapView", "non-finite fraction"), true},
    {MapMeasure::Magnitude, "magnitude", QT_TRANSLATE_NOOP("nanscope::NanMapView", "magnitude"), true},
    {MapMeasure::Headroom, "headroom", QT_TRANSLATE_NOOP("nanscope::NanMapView", "headroom"), true},
    {MapMeasure::UpdateRatio, "update-ratio", QT_TRANSLATE_NOOP("nanscope::NanMapView", "update ratio"), false},
    {MapMeasure::GradNorm, "grad-norm", QT_TRANSLATE_NOOP("nanscope::NanMapView", "gradient norm"), false},
    {MapMeasure::Difference, "difference", QT_TRANSLATE_NOOP("nanscope::NanMapView", "difference"), true},
}};

const MeasureInfo &infoOf(MapMeasure measure)
{
    for (const MeasureInfo &m : kMeasures)
        if (m.measure == measure)
            return m;
    return kMeasures.front();
}

}  // namespace

const char *mapMeasureName(MapMeasure measure) { return infoOf(measure).name; }

const char *mapMeasureId(MapMeasure measure) { return infoOf(measure).id; }

std::optional<MapMeasure> parseMapMeasure(const std::string &id)
{
    for (const MeasureInfo &m : kMeasures)
        if (id == m.id)
            return m.measure;
    return std::nullopt;
}

std::string mapMeasureIdList()
{
    std::string list;
    for (std::size_t i = 0; i < kMeasures.size(); ++i)
        list += std::string(i == 0 ? "" : i + 1 == kMeasures.size() ? " or " : ", ") + kMeasures[i].id;
    return list;
}

bool measureUsesKind(MapMeasure measure) { return infoOf(measure).usesKind; }

const MapCell *comparedCell(const NanMapData &data, const MapView &view, int column, int layer)
{
    if (!view.compared || !view.comparedLayers || layer < 0 || std::size_t(layer) >= view.comparedLayers->size())
        return nullptr;
    const int other = (*view.comparedLayers)[std::size_t(layer)];
    const int otherColumn = other >= 0 ? view.compared->columnOfStep(data.firstStep(column)) : -1;
    return otherColumn >= 0 ? &view.compared->cell(view.kind, otherColumn, other) : nullptr;
}

double relativeDifference(const MapCell &a, const MapCell &b)
{
    if (a.nan != b.nan || a.posInf != b.posInf || a.negInf != b.negInf || a.numel != b.numel)
        return 1.0;
    if (a.norm == b.norm && a.absMax == b.absMax)
        return 0.0;
    const double scale = std::max(std::fabs(a.norm), std::fabs(b.norm));
    const double byNorm = scale > 0.0 ? std::fabs(a.norm - b.norm) / scale : 0.0;
    const double top = std::max(a.absMax, b.absMax);
    const double byMax = top > 0.0 ? std::fabs(a.absMax - b.absMax) / top : 0.0;
    return std::min(1.0, std::max(byNorm, byMax));
}

double mapValue(const NanMapData &data, const MapView &view, int column, int layer)
{
    switch (view.measure) {
    case MapMeasure::Difference: {
        const MapCell &cell = data.cell(view.kind, column, layer);
        const MapCell *other = comparedCell(data, view, column, layer);
        if (!other || !cell.present || !other->present)
            return kNaN;
        if ((cell.nonFinite() > 0) != (other->nonFinite() > 0))
            return kNonFiniteValue;  // finite in one run only: the top (red)
        return log10OrZeroValue(relativeDifference(cell, *other));
    }
    case MapMeasure::NonFinite: return mapColourValue(data.cell(view.kind, column, layer));
    case MapMeasure::Magnitude:
    case MapMeasure::Headroom: {
        const MapCell &cell = data.cell(view.kind, column, layer);
        if (!cell.present)
            return kNaN;
        const double top = std::log10(largestFinite(view.precision));
        const double shift = view.measure == MapMeasure::Headroom ? top : 0.0;
        if (cell.nonFinite() > 0)
            return top - shift;  // overflowed (or NaN): the top of the scale
        return cell.absMax > 0.0 ? std::min(top, std::log10(cell.absMax)) - shift : kZeroValue;
    }
    case MapMeasure::UpdateRatio: {
        const double r = data.updateRatio(column, layer);
        if (std::isnan(r))
            return kNaN;
        return std::isinf(r) ? kNonFiniteValue : log10OrZeroValue(r);
    }
    case MapMeasure::GradNorm: {
        const MapCell &cell = data.cell(MapKind::ParamGrads, column, layer);
        if (!cell.present)
            return kNaN;
        return cell.nonFinite() > 0 ? kNonFiniteValue : log10OrZeroValue(cell.norm);
    }
    }
    return kNaN;
}

std::string decadeLabel(int exponent)
{
    if (exponent == 0)
        return "1";
    if (exponent == 1)
        return "10";
    return "1e" + std::to_string(exponent);
}

MeasureScale measureScale(const MapView &view, double shownMin, double shownMax)
{
    MeasureScale s;
    const bool anyShown = std::isfinite(shownMin) && std::isfinite(shownMax);
    const std::string precision = precisionName(view.precision);
    const double top = std::log10(largestFinite(view.precision));
    switch (view.measure) {
    case MapMeasure::NonFinite:
        s.lower = 0.0;
        s.upper = 1.0;
        s.ticks = {{0.0, "finite"}, {0.2, "any"}, {0.6, "half"}, {1.0, "all"}};
        s.title = "share of NaN/Inf values";
        return s;
    case MapMeasure::Magnitude: {
        // Fitted to what is shown, so a healthy model's layers differ in colour; once anything
        // comes within 8 decades of the precision's largest value (or passed it), that value is
        // the top of the scale, marked.
        const double hi = anyShown ? shownMax : 1.0;
        const bool nearTop = hi >= top - 8.0;
        s.upper = nearTop ? top : std::ceil(hi) + 1.0;
        s.lower = std::floor(std::max(kZeroValue, std::min(anyShown ? shownMin : -3.0, s.upper - 2.0)));
        addDecadeTicks(s, 7, nearTop ? 0.5 * (s.upper - s.lower) / 7.0 : 0.0);
        if (nearTop)
            s.ticks.emplace_back(s.upper, precision + " max");
        s.title = nearTop ? "largest |value|" : "largest |value|; " + precision + " max: off scale";
        return s;
    }
    case MapMeasure::Headroom:
        s.upper = 0.0;
        s.lower = std::floor(std::max(kZeroValue, std::min(anyShown ? shownMin : -8.0, -4.0)));
        addDecadeTicks(s, 7, 0.0);
        s.ticks.back().second = precision + " max";
        s.title = "largest |value| / " + precision + " max";
        return s;
    case MapMeasure::UpdateRatio:
        // The usual range is about 1e-4..1e-2 a step: keep it on the scale whatever is shown.
        s.lower = std::floor(std::max(kZeroValue, std::min(anyShown ? shownMin : -6.0, -5.0)));
        s.upper = std::ceil(std::max(anyShown ? shownMax : 0.0, 0.0));
        addDecadeTicks(s, 7, 0.0);
        s.title = "|Δw| / |w| per step";
        return s;
    case MapMeasure::Difference:
        // From float32's rounding (about 1e-7) to all of the value; identical cells lie below.
        s.lower = -8.0;
        s.upper = 0.0;
        addDecadeTicks(s, 5, 0.0);
        s.ticks.back().second = "100%";
        s.title = "relative difference (grey: same; red: one non-finite)";
        return s;
    case MapMeasure::GradNorm:
        s.lower = std::floor(anyShown ? std::max(kZeroValue, shownMin) : -4.0);
        s.upper = std::max(s.lower + 1.0, std::ceil(anyShown ? shownMax : 1.0));
        addDecadeTicks(s, 7, 0.0);
        s.title = "parameter-gradient norm";
        return s;
    }
    return s;
}

}  // namespace nanscope
