#include "bench/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace folsom::bench {
namespace {

std::string html_escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

constexpr double plot_w = 720, plot_h = 320, margin_l = 70, margin_r = 20, margin_t = 20,
                 margin_b = 50;

/// The opening tag of a plot_w x plot_h chart, named `label` for screen readers.
std::string svg_start(std::string_view label) {
    return fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
        "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
        plot_w, plot_h, plot_w, plot_h, label);
}

/// A "nice" axis step (1, 2 or 5 times a power of ten) giving about `ticks` ticks up to `max`.
double nice_step(double max, int ticks) {
    if (max <= 0) return 1;
    const double raw = max / ticks;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag) return m * mag;
    return 10 * mag;
}

/// The percentile curve: x is log10(1 / (1 - p)), so 90%, 99%, 99.9% ... are equally spaced.
std::string percentile_svg(const Histogram& h) {
    const auto curve = h.percentile_curve();
    if (curve.empty()) return "<p>No latencies were recorded.</p>";
    const double n = static_cast<double>(h.count());
    const double x_max = std::clamp(std::ceil(std::log10(std::max(n, 10.0))), 1.0, 6.0);
    const double y_top = static_cast<double>(h.max()) / 1000.0;
    const double y_step = nice_step(y_top, 6);
    const double y_max = std::max(y_step, std::ceil(y_top / y_step) * y_step);
    auto xpos = [&](double p) {
        const double nines = p >= 100.0 ? x_max : std::min(x_max, -std::log10(1.0 - p / 100.0));
        return margin_l + nines / x_max * (plot_w - margin_l - margin_r);
    };
    auto ypos = [&](double us) {
        return plot_h - margin_b - us / y_max * (plot_h - margin_t - margin_b);
    };
    std::string o = svg_start("latency by percentile");
    auto out = std::back_inserter(o);
    // Grid and axes.
    for (double y = 0; y <= y_max + 1e-9; y += y_step)
        fmt::format_to(out,
                       "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" class=\"yl\">{5:g}</text>\n",
                       margin_l, plot_w - margin_r, ypos(y), margin_l - 6, ypos(y) + 4, y);
    for (int k = 0; k <= static_cast<int>(x_max); ++k) {
        const double p = 100.0 * (1.0 - std::pow(10.0, -k));
        const double x = xpos(p);
        std::string label = k == 0 ? "0%" : fmt::format("{:.{}f}%", p, std::max(0, k - 2));
        fmt::format_to(out,
                       "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" class=\"xl\">{4}</text>\n",
                       x, margin_t, plot_h - margin_b, plot_h - margin_b + 16, label);
    }
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\" class=\"xl\">percentile</text>\n",
                   (plot_w + margin_l) / 2, plot_h - 8);
    fmt::format_to(out,
                   "<text x=\"14\" y=\"{0}\" class=\"xl\" transform=\"rotate(-90 14 {0})\">"
                   "latency (µs)</text>\n",
                   (plot_h - margin_b + margin_t) / 2);
    // The curve, as steps: every value of a bucket holds from the previous percentile to its own.
    fmt::format_to(out, "<polyline class=\"curve\" points=\"");
    double prev_p = 0;
    for (const auto& pt : curve) {
        const double y = ypos(static_cast<double>(pt.value) / 1000.0);
        fmt::format_to(out, "{:.1f},{:.1f} {:.1f},{:.1f} ", xpos(prev_p), y, xpos(pt.percentile),
                       y);
        prev_p = pt.percentile;
    }
    fmt::format_to(out, "\"/>\n</svg>\n");
    return o;
}

/// The distribution: the share of requests per latency bin, bins evenly spaced in log(latency).
std::string distribution_svg(const Histogram& h) {
    if (h.count() == 0) return {};
    constexpr int bins = 60;
    const double lo = std::log10(std::max<double>(1.0, static_cast<double>(h.min())));
    const double hi = std::max(lo + 0.1, std::log10(static_cast<double>(h.max()) + 1.0));
    std::vector<double> share(bins, 0.0);
    for (std::size_t i = 0; i < Histogram::bucket_count; ++i) {
        const auto c = h.bucket_value_count(i);
        if (c == 0) continue;
        const double v =
            std::log10(std::max<double>(1.0, static_cast<double>(Histogram::bucket_lowest(i))));
        const int b = std::clamp(static_cast<int>((v - lo) / (hi - lo) * bins), 0, bins - 1);
        share[static_cast<std::size_t>(b)] +=
            static_cast<double>(c) / static_cast<double>(h.count());
    }
    const double top = *std::max_element(share.begin(), share.end());
    const double inner_w = plot_w - margin_l - margin_r, inner_h = plot_h - margin_t - margin_b;
    std::string o = svg_start("latency distribution");
    auto out = std::back_inserter(o);
    for (int b = 0; b < bins; ++b) {
        const double hgt = top > 0 ? share[static_cast<std::size_t>(b)] / top * inner_h : 0;
        fmt::format_to(out,
                       "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                       "height=\"{:.1f}\"><title>{:.3f}%</title></rect>\n",
                       margin_l + b * inner_w / bins, plot_h - margin_b - hgt, inner_w / bins - 1,
                       hgt, 100 * share[static_cast<std::size_t>(b)]);
    }
    // Decade ticks on the log axis (in µs).
    for (double d = std::ceil(lo); d <= hi; d += 1) {
        const double x = margin_l + (d - lo) / (hi - lo) * inner_w;
        fmt::format_to(out,
                       "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"grid\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" class=\"xl\">{4:g}</text>\n",
                       x, margin_t, plot_h - margin_b, plot_h - margin_b + 16,
                       std::pow(10.0, d) / 1000.0);
    }
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\" class=\"xl\">latency (µs, log scale)</text>\n",
                   (plot_w + margin_l) / 2, plot_h - 8);
    fmt::format_to(out, "</svg>\n");
    return o;
}

}  // namespace

std::string to_html(const Summary& s) {
    const auto& w = s.workload;
    const auto& l = s.latency_us;
    std::string servers;
    for (const auto& sv : s.servers)
        servers += (servers.empty() ? "" : ", ") + html_escape(sv);
    std::string o;
    auto out = std::back_inserter(o);
    fmt::format_to(out, R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>folsom bench: {op} {ops_s:.0f} ops/s</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
td, th {{ padding: 2px 12px; text-align: left; border-bottom: 1px solid #ddd; }}
td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
svg {{ background: #fafafa; border: 1px solid #ddd; display: block; margin-bottom: 1.5em; }}
.grid {{ stroke: #ddd; stroke-width: 1; }}
.curve {{ fill: none; stroke: #1f77b4; stroke-width: 2; }}
.bar {{ fill: #1f77b4; }}
.xl {{ font-size: 12px; text-anchor: middle; }}
.yl {{ font-size: 12px; text-anchor: end; }}
</style></head><body>
<h1>folsom bench</h1>
<p>{op} against {servers}{embedded} over {protocol}{interrupted}</p>
<table>
<tr><th>ops</th><td class="n">{ops}</td></tr>
<tr><th>ops/s</th><td class="n">{ops_s:.0f}</td></tr>
<tr><th>keys/s</th><td class="n">{keys_s:.0f}</td></tr>
<tr><th>hits</th><td class="n">{hits}</td></tr>
<tr><th>misses</th><td class="n">{misses}</td></tr>
<tr><th>sets</th><td class="n">{sets}</td></tr>
<tr><th>errors</th><td class="n">{errors}</td></tr>
<tr><th>client CPU µs/op</th><td class="n">{cpu:.2f}</td></tr>
<tr><th>duration</th><td class="n">{dur:.2f} s</td></tr>
</table>
<h2>Latency (µs)</h2>
<table><tr><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>mean</th></tr>
<tr><td class="n">{p50:.1f}</td><td class="n">{p90:.1f}</td><td class="n">{p99:.1f}</td>
<td class="n">{p999:.1f}</td><td class="n">{max:.1f}</td><td class="n">{mean:.1f}</td></tr></table>
)",
                   fmt::arg("op", to_string(w.op)), fmt::arg("ops_s", s.ops_per_sec),
                   fmt::arg("servers", servers),
                   fmt::arg("embedded", s.embedded_server ? " (embedded memcached)" : ""),
                   fmt::arg("protocol", html_escape(s.protocol)),
                   fmt::arg("interrupted", s.interrupted ? " — interrupted" : ""),
                   fmt::arg("ops", s.counts.ops), fmt::arg("keys_s", s.keys_per_sec),
                   fmt::arg("hits", s.counts.hits), fmt::arg("misses", s.counts.misses),
                   fmt::arg("sets", s.counts.sets), fmt::arg("errors", s.counts.errors),
                   fmt::arg("cpu", s.cpu_us_per_op), fmt::arg("dur", s.duration_s),
                   fmt::arg("p50", l.p50), fmt::arg("p90", l.p90), fmt::arg("p99", l.p99),
                   fmt::arg("p999", l.p999), fmt::arg("max", l.max), fmt::arg("mean", l.mean));
    if (!s.counts.errors_by_message.empty()) {
        fmt::format_to(out, "<h2>Errors</h2><table>\n");
        for (const auto& [msg, n] : s.counts.errors_by_message)
            fmt::format_to(out, "<tr><td class=\"n\">{}</td><td>{}</td></tr>\n", n,
                           html_escape(msg));
        fmt::format_to(out, "</table>\n");
    }
    if (s.latency_ns) {
        fmt::format_to(out, "<h2>Latency by percentile</h2>\n{}", percentile_svg(*s.latency_ns));
        fmt::format_to(out, "<h2>Latency distribution</h2>\n{}", distribution_svg(*s.latency_ns));
    }
    fmt::format_to(out,
                   "<h2>Workload</h2><table>\n<tr><th>op</th><td>{}</td></tr>\n"
                   "<tr><th>keys</th><td class=\"n\">{}</td></tr>\n"
                   "<tr><th>value size</th><td class=\"n\">{} B</td></tr>\n"
                   "<tr><th>batch</th><td class=\"n\">{}</td></tr>\n"
                   "<tr><th>depth</th><td class=\"n\">{}</td></tr>\n"
                   "<tr><th>connections</th><td class=\"n\">{}</td></tr>\n"
                   "<tr><th>threads</th><td class=\"n\">{}</td></tr>\n"
                   "<tr><th>set ratio</th><td class=\"n\">{}</td></tr>\n"
                   "<tr><th>preload</th><td>{} ({} sets)</td></tr>\n"
                   "<tr><th>pinned to CPU</th><td>{}</td></tr>\n</table>\n",
                   to_string(w.op), w.keys, w.value_size, w.op == Op::mget ? w.batch : 1, w.depth,
                   w.connections, w.threads, w.op == Op::mixed ? w.set_ratio : 0.0,
                   w.preload ? "yes" : "no", s.preload_sets,
                   s.cpu >= 0 ? std::to_string(s.cpu) : std::string("no"));
    fmt::format_to(out, "</body></html>\n");
    return o;
}

}  // namespace folsom::bench
