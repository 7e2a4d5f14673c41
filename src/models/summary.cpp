// Model::summary: Keras 3's table (keras/src/utils/summary_utils.py, drawn by rich) and its
// parameter counts with their memory sizes, character for character as Keras prints it to a
// log: column widths from Keras' positions at the terminal's width (COLUMNS, the terminal, or
// 80), shrunk to fit as rich shrinks them; cells wrapped at spaces.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cfenv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "models/model.h"

namespace tenfold::models {

namespace {

std::string with_thousands(int64_t value) {
  std::string digits = std::to_string(value), text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

/// Keras' readable_memory_size: "2.65 MB" (powers of 1024).
std::string readable_memory_size(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  while (unit < 5 && bytes / 1024 >= 1) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %s", bytes, units[unit]);
  return text;
}

/// shutil.get_terminal_size().columns: $COLUMNS, else the terminal's, else 80.
int terminal_columns() {
  if (const char* columns = std::getenv("COLUMNS"); columns && std::atoi(columns) > 0) return std::atoi(columns);
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

/// Columns a UTF-8 string takes: its code points (no wide characters appear here).
size_t display_width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text) width += (c & 0xc0) != 0x80;
  return width;
}

/// The lines of `text` wrapped to `width` as rich wraps a cell: at spaces, a word longer than
/// a line on a line of its own, cut with an ellipsis (rich's default overflow).
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t space = std::min(text.find(' ', start), text.size());
    std::string word = text.substr(start, space - start);
    start = space + 1;
    if (!line.empty() && line.size() + 1 + word.size() <= width) {
      line += " " + word;
      continue;
    }
    if (!line.empty()) lines.push_back(line);
    if (word.size() > width) word = word.substr(0, width - 1) + "\u2026";  // …
    line = word;
  }
  lines.push_back(line);
  return lines;
}

/// rich's table with show_lines: heavy header, light rules between rows.
class Table {
 public:
  /// Keras' positions (fractions of the line) and which columns are right-aligned.
  Table(const std::vector<double>& positions, std::vector<bool> right_aligned, int line_length)
      : right_aligned_(std::move(right_aligned)) {
    // Keras' widths, padded by rich (one space each side), then shrunk to the table's width
    // less its borders by rich's ratio_reduce (Python's round: half to even).
    std::vector<int> widths;
    int current = 0;
    for (double position : positions) {
      const int width = int(position * line_length) - current;
      widths.push_back(width + 2);
      current += width;
    }
    int total = 0;
    for (int width : widths) total += width;
    int excess = total - (line_length - int(widths.size()) - 1);
    int ratios = int(widths.size());
    std::fesetround(FE_TONEAREST);
    for (int& width : widths) {
      if (excess <= 0) break;
      const int cut = std::min(width, int(std::nearbyint(double(excess) / ratios)));
      width -= cut;
      excess -= cut;
      --ratios;
    }
    for (int width : widths) widths_.push_back(size_t(width - 2));
  }

  std::string rule(const char* left, const char* line, const char* middle, const char* right) const {
    std::string text = left;
    for (size_t i = 0; i < widths_.size(); ++i) {
      for (size_t k = 0; k < widths_[i] + 2; ++k) text += line;
      text += i + 1 < widths_.size() ? middle : right;
    }
    return text + "\n";
  }

  std::string row(const std::vector<std::string>& cells, const char* border) const {
    std::vector<std::vector<std::string>> lines;
    size_t height = 1;
    for (size_t i = 0; i < cells.size(); ++i) {
      lines.push_back(wrap(cells[i], widths_[i]));
      height = std::max(height, lines.back().size());
    }
    std::string text;
    for (size_t line = 0; line < height; ++line) {
      text += border;
      for (size_t i = 0; i < cells.size(); ++i) {
        const std::string part = line < lines[i].size() ? lines[i][line] : "";
        const std::string pad(widths_[i] - display_width(part), ' ');
        text += ' ';
        text += right_aligned_[i] ? pad : part;
        text += right_aligned_[i] ? part : pad;
        text += ' ';
        text += border;
      }
      text += "\n";
    }
    return text;
  }

 private:
  std::vector<size_t> widths_;
  std::vector<bool> right_aligned_;
};

}  // namespace

std::string Model::summary() const {
  // Keras prints a Functional model whose graph is a chain like a Sequential one, its inputs
  // as rows; other Functional models add a "Connected to" column.
  bool chain = graph_.inputs().size() <= 1;
  std::set<int> consumed;
  std::set<const Layer*> called;
  for (const graph::Node& node : graph_.nodes()) {
    chain = chain && node.inputs.size() == 1 && consumed.insert(node.inputs[0]).second && called.insert(node.layer).second;
  }
  const bool sequential = class_name() == "Sequential";
  const bool connected = !sequential && !chain;
  const int line_length = std::min(connected ? 108 : 88, terminal_columns() - 4);
  Table table(connected ? std::vector<double>{0.3, 0.56, 0.74, 1.0} : std::vector<double>{0.45, 0.80, 1.0},
              connected ? std::vector<bool>{false, false, true, false} : std::vector<bool>{false, false, true},
              line_length);
  std::vector<std::vector<std::string>> rows;
  auto add_row = [&](const std::string& name, const std::string& shape, const std::string& params,
                     const std::string& inputs) {
    rows.push_back({name, shape, params});
    if (connected) rows.back().push_back(inputs.empty() ? "-" : inputs);
  };
  if (built()) {
    // Each tensor as "Connected to" names it: <layer>[<its call>][0].
    std::vector<std::string> tensor_names(size_t(graph_.num_tensors()));
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      const int input = graph_.inputs()[i];
      tensor_names[size_t(input)] = graph_.input_names()[i] + "[0][0]";
      if (!sequential) {
        add_row(graph_.input_names()[i] + " (InputLayer)", graph_.sample_shape(input).with_leading(0).to_string(true),
                "0", "");
      }
    }
    // A row per member (a nested model is one, as in Keras); a shared one lists every call's
    // inputs and shows its last call's output shape, as Keras does.
    std::map<std::string, size_t> row_of;
    std::map<std::string, int> calls_of;
    for (const Call& call : calls_) {
      const std::string& name = call.member.name();
      const int index = calls_of[name]++;
      std::string inputs;
      for (int input : call.inputs) inputs += (inputs.empty() ? "" : ", ") + tensor_names[size_t(input)];
      tensor_names[size_t(call.output)] = name + "[" + std::to_string(index) + "][0]";
      const std::string shape = graph_.sample_shape(call.output).with_leading(0).to_string(true);
      if (index > 0) {
        std::vector<std::string>& row = rows[row_of.at(name)];
        row[1] = shape;
        if (connected) row[3] += ", " + inputs;
        continue;
      }
      row_of[name] = rows.size();
      const int64_t params = call.member.layer ? call.member.layer->count_params() : call.member.model->count_params();
      add_row(name + " (" + call.member.class_name() + ")", shape, with_thousands(params), inputs);
    }
  } else {
    for (const auto& layer : layers_) {
      add_row(layer->name() + " (" + layer->class_name() + ")", "?", with_thousands(layer->count_params()), "");
    }
  }

  std::string text = "Model: \"" + name_ + "\"\n" + table.rule("┏", "━", "┳", "┓");
  std::vector<std::string> header = {"Layer (type)", "Output Shape", "Param #"};
  if (connected) header.push_back("Connected to");
  text += table.row(header, "┃") + table.rule("┡", "━", "╇", "┩");
  for (size_t i = 0; i < rows.size(); ++i) {
    text += table.row(rows[i], "│");
    text += i + 1 < rows.size() ? table.rule("├", "─", "┼", "┤") : table.rule("└", "─", "┴", "┘");
  }

  // Counts and memory: float32 weights, integer ones (Normalization's count) int64.
  auto bytes_of = [](const Variable& weight) { return double(weight.shape().num_elements()) * (weight.integer() ? 8 : 4); };
  int64_t trainable = 0, frozen = 0;
  double trainable_bytes = 0, frozen_bytes = 0;
  const std::vector<Variable*> trained = trainable_weights();
  for (const Variable* weight : weights()) {
    const bool is_trained = std::find(trained.begin(), trained.end(), weight) != trained.end();
    (is_trained ? trainable : frozen) += weight->shape().num_elements();
    (is_trained ? trainable_bytes : frozen_bytes) += bytes_of(*weight);
  }
  // The optimizer's variables: the iteration count (int64), the learning rate unless
  // scheduled, then its slots. Keras counts them once its optimizer is built, which loading
  // a compiled model or training does; Tenfold builds it at compile, so a model compiled in
  // code shows them before training too.
  int64_t optimizer_count = 0;
  double optimizer_bytes = 0;
  const bool optimizer_built = optimizer_ != nullptr;
  if (optimizer_built) {
    optimizer_count = optimizer_->learning_rate_schedule() ? 1 : 2;
    optimizer_bytes = optimizer_->learning_rate_schedule() ? 8 : 12;
    for (const optimizers::KerasVariable& variable : optimizer_->keras_variables()) {
      // A slot may be stored padded to its weight's native layout: count Keras' shape.
      const int64_t count = variable.variable ? optimized_weights_.at(*variable.variable)->shape().num_elements()
                                              : variable.value->num_elements();
      optimizer_count += count;
      optimizer_bytes += 4.0 * double(count);
    }
  }
  text += " Total params: " + with_thousands(trainable + frozen + optimizer_count) + " (" +
          readable_memory_size(trainable_bytes + frozen_bytes + optimizer_bytes) + ")\n";
  text += " Trainable params: " + with_thousands(trainable) + " (" + readable_memory_size(trainable_bytes) + ")\n";
  text += " Non-trainable params: " + with_thousands(frozen) + " (" + readable_memory_size(frozen_bytes) + ")\n";
  if (optimizer_built) {
    text += " Optimizer params: " + with_thousands(optimizer_count) + " (" + readable_memory_size(optimizer_bytes) + ")\n";
  }
  return text;
}

}  // namespace tenfold::models
