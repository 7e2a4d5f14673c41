// tenfold plot HISTORY.json: the training curves as a PNG, one panel per metric (loss,
// accuracy, ...), training and validation side by side, drawn with cairo.
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "core/error.h"
#include "io/atomic_file.h"

namespace tenfold::cli {

namespace {

const char* const plot_help = R"(usage: tenfold plot HISTORY.json [options]

Draws the curves of a training history (as tenfold train --history writes it, or Keras'
history.history dumped as JSON) into a PNG: one panel per metric (loss, accuracy, ...),
the training values and the validation ones (val_*) per epoch.

options:
  --output FILE.png         where to write (default: HISTORY with .png in place of .json)
  --width N                 image width in pixels (default 1200)
  --height N                image height in pixels (default 450)
)";

using Series = std::vector<double>;

struct Color {
  double red, green, blue;
};
constexpr Color training_color{0.12, 0.47, 0.71};    // blue
constexpr Color validation_color{1.00, 0.50, 0.05};  // orange
constexpr Color axis_color{0.25, 0.25, 0.25};
constexpr Color grid_color{0.88, 0.88, 0.88};

void set_color(cairo_t* cr, Color color) { cairo_set_source_rgb(cr, color.red, color.green, color.blue); }

/// "Nice" tick values covering [low, high]: steps of 1, 2 or 5 times a power of ten.
std::vector<double> ticks(double low, double high, int wanted) {
  double raw = (high - low) / wanted;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude * (raw / magnitude < 2 ? 1 : raw / magnitude < 5 ? 2 : 5);
  std::vector<double> values;
  for (double value = std::ceil(low / step) * step; value <= high + step * 1e-9; value += step) {
    values.push_back(std::abs(value) < step * 1e-9 ? 0 : value);
  }
  return values;
}

void draw_text(cairo_t* cr, const std::string& text, double x, double y, double align_x, double align_y) {
  cairo_text_extents_t extents;
  cairo_text_extents(cr, text.c_str(), &extents);
  cairo_move_to(cr, x - extents.width * align_x - extents.x_bearing, y - extents.height * align_y - extents.y_bearing);
  cairo_show_text(cr, text.c_str());
}

/// One panel in the box (left, top, width, height): axes, grid, ticks and both curves.
void draw_panel(cairo_t* cr, const std::string& metric, const Series& training, const Series* validation,
                double left, double top, double width, double height) {
  const double plot_left = left + 70, plot_top = top + 40, plot_right = left + width - 20,
               plot_bottom = top + height - 50;
  double low = *std::min_element(training.begin(), training.end());
  double high = *std::max_element(training.begin(), training.end());
  if (validation) {
    low = std::min(low, *std::min_element(validation->begin(), validation->end()));
    high = std::max(high, *std::max_element(validation->begin(), validation->end()));
  }
  double margin = high > low ? 0.05 * (high - low) : std::max(0.05 * std::abs(high), 0.01);
  low -= margin;
  high += margin;
  const size_t epochs = training.size();
  auto x_of = [&](size_t epoch) {  // epoch counted from 1
    return epochs == 1 ? (plot_left + plot_right) / 2
                       : plot_left + (plot_right - plot_left) * double(epoch - 1) / double(epochs - 1);
  };
  auto y_of = [&](double value) { return plot_bottom - (plot_bottom - plot_top) * (value - low) / (high - low); };

  cairo_set_font_size(cr, 13);
  cairo_set_line_width(cr, 1);
  for (double value : ticks(low, high, 5)) {
    set_color(cr, grid_color);
    cairo_move_to(cr, plot_left, y_of(value));
    cairo_line_to(cr, plot_right, y_of(value));
    cairo_stroke(cr);
    set_color(cr, axis_color);
    char label[32];
    std::snprintf(label, sizeof label, "%g", value);
    draw_text(cr, label, plot_left - 8, y_of(value), 1.0, 0.5);
  }
  size_t epoch_step = std::max<size_t>(1, size_t(std::ceil(double(epochs) / 10)));
  for (size_t epoch = 1; epoch <= epochs; epoch += epoch_step) {
    draw_text(cr, std::to_string(epoch), x_of(epoch), plot_bottom + 8, 0.5, 0.0);
  }
  cairo_rectangle(cr, plot_left, plot_top, plot_right - plot_left, plot_bottom - plot_top);
  cairo_stroke(cr);
  draw_text(cr, "epoch", (plot_left + plot_right) / 2, plot_bottom + 30, 0.5, 0.0);
  // Title at the left above the plot, the legend at the right, on one baseline.
  const double baseline = top + 26;
  cairo_set_font_size(cr, 16);
  cairo_move_to(cr, plot_left, baseline);
  cairo_show_text(cr, metric.c_str());
  cairo_set_font_size(cr, 13);
  std::vector<std::pair<std::string, Color>> legend = {{"training", training_color}};
  if (validation) legend.emplace_back("validation", validation_color);
  double x = plot_right;
  for (auto item = legend.rbegin(); item != legend.rend(); ++item) {
    cairo_text_extents_t extents;
    cairo_text_extents(cr, item->first.c_str(), &extents);
    x -= extents.x_advance;
    set_color(cr, axis_color);
    cairo_move_to(cr, x, baseline);
    cairo_show_text(cr, item->first.c_str());
    set_color(cr, item->second);
    cairo_set_line_width(cr, 2.5);
    cairo_move_to(cr, x - 31, baseline - 4);
    cairo_line_to(cr, x - 6, baseline - 4);
    cairo_stroke(cr);
    x -= 31 + 18;
  }

  auto draw_curve = [&](const Series& values, Color color) {
    set_color(cr, color);
    cairo_set_line_width(cr, 2.5);
    for (size_t i = 0; i < values.size(); ++i) {
      if (i == 0) cairo_move_to(cr, x_of(1), y_of(values[0]));
      else cairo_line_to(cr, x_of(i + 1), y_of(values[i]));
    }
    cairo_stroke(cr);
    for (size_t i = 0; i < values.size(); ++i) {
      cairo_arc(cr, x_of(i + 1), y_of(values[i]), 3.5, 0, 2 * M_PI);
      cairo_fill(cr);
    }
  };
  draw_curve(training, training_color);
  if (validation) draw_curve(*validation, validation_color);
}

/// {"loss": [...], ...} from a --history file or a plain dump of Keras' history.history.
std::map<std::string, Series> read_history(const std::string& path) {
  std::ifstream in(path);
  check_argument(bool(in), "history file " + path + " does not exist or cannot be read");
  nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  check_argument(!json.is_discarded() && json.is_object(), path + " is not a JSON object");
  const nlohmann::json& logs = json.contains("history") ? json.at("history") : json;
  std::map<std::string, Series> history;
  for (const auto& [name, values] : logs.items()) {
    check_argument(values.is_array() && !values.empty(),
                   path + ": \"" + name + "\" should be a list of per-epoch values");
    for (const auto& value : values) {
      check_argument(value.is_number(), path + ": \"" + name + "\" holds a value that is not a number");
      history[name].push_back(value.get<double>());
      check_argument(std::isfinite(history[name].back()), path + ": \"" + name + "\" holds a value that is not finite");
    }
  }
  return history;
}

}  // namespace

int plot(const std::vector<std::string>& args) {
  Arguments arguments("plot", args);
  if (arguments.wants_help()) {
    std::fputs(plot_help, stdout);
    return 0;
  }
  std::optional<std::string> output = arguments.take("--output");
  const int width = int(arguments.take_integer("--width", 1200, 200));
  const int height = int(arguments.take_integer("--height", 450, 150));
  std::string history_path = arguments.take_required_positional("HISTORY.json");
  arguments.finish();
  std::string png_path = output.value_or(
      (history_path.size() > 5 && history_path.ends_with(".json") ? history_path.substr(0, history_path.size() - 5)
                                                                  : history_path) + ".png");

  std::map<std::string, Series> history = read_history(history_path);
  std::vector<std::string> metrics;  // "loss" first, then the others, each with its val_ twin
  for (const auto& [name, values] : history) {
    if (name.starts_with("val_")) continue;
    check_argument(values.size() == history.begin()->second.size(),
                   history_path + ": the metrics cover different numbers of epochs");
    metrics.insert(name == "loss" ? metrics.begin() : metrics.end(), name);
  }
  check_argument(!metrics.empty(), history_path + " holds no training metric (loss, accuracy, ...)");

  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height), cairo_surface_destroy);
  cairo_t* cr = cairo_create(surface.get());
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  const double panel_width = double(width) / double(metrics.size());
  for (size_t i = 0; i < metrics.size(); ++i) {
    auto validation = history.find("val_" + metrics[i]);
    const bool matching = validation != history.end() && validation->second.size() == history[metrics[i]].size();
    draw_panel(cr, metrics[i], history[metrics[i]], matching ? &validation->second : nullptr,
               panel_width * double(i), 0, panel_width, height);
  }
  cairo_destroy(cr);
  io::replace_file_atomically(png_path, [&](const std::string& temporary_path) {
    cairo_status_t status = cairo_surface_write_to_png(surface.get(), temporary_path.c_str());
    if (status != CAIRO_STATUS_SUCCESS) {
      throw Error(ErrorCode::unavailable, "could not write " + png_path + ": " + cairo_status_to_string(status));
    }
  });
  std::printf("Wrote %s (%dx%d): %zu panel%s, %zu epochs\n", png_path.c_str(), width, height, metrics.size(),
              metrics.size() == 1 ? "" : "s", history[metrics[0]].size());
  return 0;
}

}  // namespace tenfold::cli
